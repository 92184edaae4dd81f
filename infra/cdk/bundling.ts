// How every function is bundled: the local esbuild (never Docker), ESM for Node 24, the AWS SDK
// included, split into index.mjs and the chunks its dynamic imports load (infra/build).
//
// NodejsFunction always hands esbuild `--outfile`, and esbuild splits only into an `--outdir`, so
// the bundle is built by the afterBundling hook (infra/build/bundle-function.ts), with esbuild's
// JS API and its plugins. NodejsFunction's own esbuild run is kept to the entry file alone (every
// import external, a few milliseconds), and the hook replaces what it wrote.
import { join } from 'node:path';
import { LogLevel, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { TARGET } from '../build/function-build.ts';
import { repoRoot } from './repo-paths.ts';

export { ESM_BANNER } from '../build/function-build.ts';

const BUNDLE_SCRIPT = join(repoRoot, 'infra', 'build', 'bundle-function.ts');

/** The shell command that writes a function's bundle into its asset folder. */
export const bundleCommand = (entry: string, outputDir: string): string =>
  `rm -f "${join(outputDir, 'index.mjs')}" "${join(outputDir, 'index.mjs.map')}" && "${process.execPath}" "${BUNDLE_SCRIPT}" "${entry}" "${outputDir}"`;

/** `entry`: the function's functions/<name>/lambda.ts (repo-paths.ts lambdaEntry). */
export const bundlingOptions = (entry: string): BundlingOptions => ({
  format: OutputFormat.ESM,
  target: TARGET,
  forceDockerBundling: false,
  // The SDK the code was tested with, not whichever the runtime carries.
  bundleAwsSDK: true,
  // NodejsFunction's own run: the entry alone, replaced by the hook's build.
  esbuildArgs: { '--external:*': true },
  sourceMap: false,
  logLevel: LogLevel.WARNING,
  commandHooks: {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir: string, outputDir: string) => [bundleCommand(entry, outputDir)],
  },
});
