// npm's prepare step (`npm ci`, `npm install`): the command line's bundle (cli-build.ts), when this
// install can build it. A production install has no esbuild; a build that fails leaves the bin on
// the sources, which it runs anyway whenever the bundle is not fresh: a warning, never a failed install.
const [major, minor] = process.versions.node.split('.').map(Number);
let buildable = major > 23 || (major === 23 && minor >= 6);
try {
  import.meta.resolve('esbuild');
} catch {
  buildable = false;
}
if (buildable) {
  try {
    const { ensureCli } = await import('./cli-build.ts');
    await ensureCli();
  } catch (error) {
    process.stderr.write(
      `etcd-remediator: the command line's bundle was not built, so it runs from the sources (slower to start): ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}
