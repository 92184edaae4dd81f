// `node infra/build/bundle-function.ts ENTRY OUTDIR`: one function's bundle, as the stack's
// bundling hook runs it. A failed build exits non-zero, failing the synth.
import { buildFunction } from './function-build.ts';

const [entry, outdir] = process.argv.slice(2);
if (!entry || !outdir) {
  process.stderr.write('usage: bundle-function.ts ENTRY OUTDIR\n');
  process.exit(2);
}
await buildFunction(entry, outdir);
