// How every function is bundled: the local esbuild (never Docker), one ESM file for Node 24, the
// AWS SDK included, and etcd3's .proto files beside the bundle where etcd3 looks for them.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LogLevel, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

/** The folder, next to index.mjs, that holds etcd3's protos in every bundle. */
export const PROTO_DIR = 'proto';

/**
 * Prepended to the ESM bundle. CommonJS dependencies call `require` and read `__dirname`, which
 * ESM lacks. etcd3 loads `${__dirname}/../proto/rpc.proto` when imported (lib/connection-pool.js),
 * and the path is read as written, so every folder in it must exist: `__dirname` names the
 * bundle's proto folder, and `../proto` leads back into it. The names are prefixed so they cannot
 * clash with a bundled module's own top-level names.
 */
export const ESM_BANNER = [
  "import { createRequire as __erCreateRequire } from 'node:module';",
  "import { fileURLToPath as __erFileURLToPath } from 'node:url';",
  "import { dirname as __erDirname, join as __erJoin } from 'node:path';",
  'const require = __erCreateRequire(import.meta.url);',
  'const __filename = __erFileURLToPath(import.meta.url);',
  `const __dirname = __erJoin(__erDirname(__filename), '${PROTO_DIR}');`,
].join(' ');

/** etcd3's proto folder as installed, resolved the way the bundler resolves etcd3. */
export const etcd3ProtoSource = (): string =>
  join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto');

/** The shell command that puts the protos into a bundle's output folder. */
export const copyProtosCommand = (outputDir: string): string =>
  `mkdir -p "${join(outputDir, PROTO_DIR)}" && cp "${etcd3ProtoSource()}"/*.proto "${join(outputDir, PROTO_DIR)}/"`;

export const bundlingOptions = (): BundlingOptions => ({
  format: OutputFormat.ESM,
  target: 'node24',
  // ESM entry points first: the SDK's ESM builds tree-shake better.
  mainFields: ['module', 'main'],
  banner: ESM_BANNER,
  forceDockerBundling: false,
  // The SDK the code was tested with, not whichever the runtime carries.
  bundleAwsSDK: true,
  minify: true,
  // Error and class names stay readable in logs and in `instanceof`-free checks by name.
  keepNames: true,
  sourceMap: true,
  sourcesContent: false,
  logLevel: LogLevel.WARNING,
  commandHooks: {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir: string, outputDir: string) => [copyProtosCommand(outputDir)],
  },
});
