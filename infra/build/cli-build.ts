// The command line, bundled: the same sources bin/etcd-remediator.mjs would run through Node's type
// stripping, built by the functions' esbuild options into one folder of chunks, each command's in
// its own, loaded on use. Node then resolves, reads and compiles a handful of files instead of
// about 1,500 (ours and node_modules'), and etcd3's protos come precompiled: a command starts in
// about 60 % of the time, `watch` in half (npm run bench:cli-start). The bin runs the bundle only
// while every source it was built from is unchanged (bin/cli-bundle.mjs); otherwise the sources.
//
// `node infra/build/cli-build.ts` builds it when it is not fresh (`--force`: always). `npm ci` runs
// it (prepare), and so does every test run, before any test spawns the CLI.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { BUNDLE_ROOT, freshBundle, LOCKFILE, MANIFEST, type Manifest } from '../../bin/cli-bundle.mjs';
import { repoRoot } from '../cdk/repo-paths.ts';
import { functionBuildOptions } from './function-build.ts';

const ENTRY = 'infra/cli/main.ts';
/** Builds kept beside the current one: a `watch` started on an older one still loads its later chunks from it. */
const KEEP_EARLIER = 2;

/**
 * `import.meta.url` in our sources keeps meaning the source file's own URL inside the bundle: the
 * lab finds its daemon's entry beside its own source (infra/lab/lab-attach.ts), not beside a chunk.
 */
const sourceUrlPlugin = (): Plugin => ({
  name: 'source-import-meta-url',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes('node_modules')) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      return { contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
});

const statOf = (file: string): { mtimeMs: number; size: number } => {
  const { mtimeMs, size } = statSync(file);
  return { mtimeMs, size };
};

/** Builds the bundle into a new folder and makes it the current one; returns its entry file. */
export async function buildCli(root = repoRoot): Promise<string> {
  const bundles = join(root, BUNDLE_ROOT);
  mkdirSync(bundles, { recursive: true });
  const name = `build-${Date.now()}-${process.pid}`;
  const outdir = join(bundles, name);
  const options = functionBuildOptions(ENTRY, outdir);
  // The lockfile is read before the build: an install during the build leaves the manifest stale.
  const lockfile = statOf(join(root, LOCKFILE));
  const result = await build({
    ...options,
    entryPoints: { main: ENTRY },
    absWorkingDir: root,
    // Readable in a stack trace (ETCD_REMEDIATOR_DEBUG runs the sources anyway); minifying bought no start time.
    minify: false,
    sourcemap: false,
    metafile: true,
    plugins: [sourceUrlPlugin(), ...(options.plugins ?? [])],
  });
  // Our own sources, each as it was read; node_modules is covered by npm's lockfile.
  const inputs = Object.keys(result.metafile.inputs)
    .filter((input) => !input.includes('node_modules') && !input.includes(':'))
    .map((input) => ({ path: input, ...statOf(join(root, input)) }));
  const manifest: Manifest = { version: 1, entry: `${name}/main.mjs`, lockfile, inputs };
  const file = join(root, MANIFEST);
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(manifest));
  renameSync(`${file}.${process.pid}.tmp`, file);
  removeEarlierBuilds(bundles, name);
  return join(outdir, 'main.mjs');
}

function removeEarlierBuilds(bundles: string, current: string): void {
  const earlier = readdirSync(bundles)
    .filter((entry) => entry.startsWith('build-') && entry !== current)
    .sort((a, b) => Number(b.split('-')[1]) - Number(a.split('-')[1]));
  for (const entry of earlier.slice(KEEP_EARLIER)) rmSync(join(bundles, entry), { recursive: true, force: true });
}

/** The fresh bundle's entry, built first when there is none. */
export async function ensureCli(root = repoRoot): Promise<string> {
  return freshBundle(root) ?? buildCli(root);
}

if (import.meta.main) {
  const force = process.argv.includes('--force');
  const started = performance.now();
  const fresh = force ? undefined : freshBundle(repoRoot);
  const entry = fresh ?? (await buildCli());
  const said = fresh ? 'is fresh' : `built in ${Math.round(performance.now() - started)} ms`;
  process.stdout.write(`etcd-remediator's bundled command line ${said}: ${relative(process.cwd(), entry)}\n`);
  // Read once, so a build that wrote nothing usable fails here rather than at the first command.
  readFileSync(entry);
}
