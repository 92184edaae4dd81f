// How a function's bundle is built: esbuild, ESM for Node 24, the AWS SDK inside, code split so a
// dynamic import() becomes a chunk loaded only when reached (the Kubernetes client: see
// functions/adapters/kube/kube-on-demand.ts), etcd3's protos precompiled and zod in English only, with only the parts the code names.
// The chunks sit beside index.mjs in the asset. CDK's NodejsFunction cannot split (it always
// hands esbuild --outfile), so its bundling runs this build as a hook (infra/cdk/bundling.ts).
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { repoRoot } from '../cdk/repo-paths.ts';
import { etcd3DescriptorPlugin } from './etcd3-descriptor.ts';
import { zodEnOnlyPlugin } from './zod-en-only.ts';
import { zodNamespacePlugin } from './zod-namespace.ts';

/**
 * Prepended to every output file. CommonJS dependencies call `require` and read `__dirname` and
 * `__filename`, which ESM lacks. The names are prefixed so they cannot clash with a bundled
 * module's own top-level names.
 */
export const ESM_BANNER = [
  "import { createRequire as __erCreateRequire } from 'node:module';",
  "import { fileURLToPath as __erFileURLToPath } from 'node:url';",
  "import { dirname as __erDirname } from 'node:path';",
  'const require = __erCreateRequire(import.meta.url);',
  'const __filename = __erFileURLToPath(import.meta.url);',
  'const __dirname = __erDirname(__filename);',
].join(' ');

export const TARGET = 'node24';

export function functionBuildOptions(entry: string, outdir: string): BuildOptions {
  return {
    entryPoints: { index: entry },
    outdir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: TARGET,
    outExtension: { '.js': '.mjs' },
    chunkNames: '[name]-[hash]',
    // ESM entry points first: the SDK's ESM builds tree-shake better.
    mainFields: ['module', 'main'],
    banner: { js: ESM_BANNER },
    minify: true,
    // Error and class names stay readable in logs and in `instanceof`-free checks by name.
    keepNames: true,
    sourcemap: true,
    sourcesContent: false,
    absWorkingDir: repoRoot,
    logLevel: 'warning',
    plugins: [etcd3DescriptorPlugin(), zodEnOnlyPlugin(), zodNamespacePlugin()],
  };
}

/** Builds one function into `outdir` (index.mjs and its chunks); the metafile when asked. */
export async function buildFunction(entry: string, outdir: string, options: { metafile?: boolean } = {}): Promise<Metafile | undefined> {
  const result = await build({ ...functionBuildOptions(entry, outdir), metafile: options.metafile ?? false });
  return result.metafile;
}
