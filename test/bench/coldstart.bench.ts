// Cold start of the five Lambda bundles: for each, its size and the median time of a fresh Node
// process importing it and making a first handler call. Goal: ≤ 1.5 MB a bundle without etcd3's
// protos, ≤ 150 ms import and first call. One `bundle NAME bytes=N import_ms=M` line each, for
// scripts; then the goals, and where the bytes and the time go.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackFunctionNames } from '../../infra/cdk/function-specs.ts';
import { synthBundles, type DeployedBundle } from './coldstart/bundles.ts';
import { benchEnv, coldStarts, refusedPort } from './coldstart/cold-start.ts';
import { firstEvent } from './coldstart/first-events.ts';
import { analyseFunction, buildPart, foldersOf, packageOf, PARTS, sumBy } from './coldstart/where.ts';

const RUNS = 7;
const PART_RUNS = 5;
const TOP_PACKAGES = 8;
const GOAL_BYTES = 1_500_000;
const GOAL_MS = 150;

const kb = (bytes: number): string => `${(bytes / 1000).toFixed(0)} kB`;
const ms = (x: number): number => Math.round(x);

interface Measured {
  bundle: DeployedBundle;
  importMs: number;
  callMs: number;
  totalMs: number;
  outcomes: string[];
  what: string;
}

async function measure(bundles: DeployedBundle[], endpoint: string): Promise<Measured[]> {
  const measured: Measured[] = [];
  for (const bundle of bundles) {
    const { event, what } = firstEvent(bundle.name);
    const figures = await coldStarts({ file: bundle.file, functionName: bundle.name, event, env: benchEnv(bundle.name, bundle.environment, endpoint) }, RUNS);
    measured.push({ bundle, what, ...figures });
    console.log(`bundle ${bundle.name} bytes=${bundle.bytes} import_ms=${ms(figures.totalMs)}`);
  }
  return measured;
}

async function whereTimeGoes(scratch: string, env: Record<string, string>): Promise<void> {
  const parts: string[] = [];
  for (const part of Object.keys(PARTS)) {
    const file = await buildPart(part, scratch);
    const { importMs } = await coldStarts({ file, functionName: part, env }, PART_RUNS);
    parts.push(`${part} ${ms(importMs)} ms`);
  }
  console.log(`  import alone, each dependency bundled by itself the same way (median of ${PART_RUNS}): ${parts.join(', ')}`);
}

async function whereBytesGo(missed: Measured[], scratch: string): Promise<void> {
  const pct = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)}%`;
  for (const { bundle } of missed) {
    const { bytes, inputs } = await analyseFunction(bundle.name, scratch);
    const packages = sumBy(inputs, packageOf);
    const same = bytes === bundle.bytes ? 'the same size as the asset' : `NOT the asset's size: ${bytes} vs ${bundle.bytes}`;
    console.log(`  ${bundle.name} (metafile build ${same}):`);
    for (const p of packages.slice(0, TOP_PACKAGES)) console.log(`    ${p.name.padEnd(34)} ${kb(p.bytes).padStart(7)}  ${pct(p.bytes, bytes).padStart(5)}`);
    const rest = packages.slice(TOP_PACKAGES).reduce((sum, p) => sum + p.bytes, 0);
    console.log(`    ${`${packages.length - TOP_PACKAGES} more packages`.padEnd(34)} ${kb(rest).padStart(7)}  ${pct(rest, bytes).padStart(5)}`);
    const largest = packages[0];
    if (largest && !largest.name.startsWith('(ours)')) {
      const folders = foldersOf(inputs, largest.name).slice(0, 3);
      console.log(`    the largest, ${largest.name}, by folder: ${folders.map((f) => `${f.name} ${kb(f.bytes)}`).join(', ')}`);
    }
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const { outdir, bundles: synthesized } = synthBundles();
  const scratch = mkdtempSync(join(tmpdir(), 'coldstart-where-'));
  try {
    const order = new Map<string, number>(stackFunctionNames.map((name, i) => [name, i]));
    const bundles = synthesized.sort((a, b) => (order.get(a.name) ?? 99) - (order.get(b.name) ?? 99));
    const endpoint = `http://127.0.0.1:${await refusedPort()}`;
    console.log(`cold start on Node ${process.version}: the ${bundles.length} bundles CDK wrote at synth (NodejsFunction, infra/cdk/bundling.ts), median of ${RUNS} fresh processes each`);
    console.log(`import_ms = import of index.mjs + one handler call (the function's first event; its first AWS call is refused at ${endpoint}, one SDK attempt); bytes = index.mjs alone`);
    // Other work on the machine slows every figure; say how busy it was.
    console.log(`load average before: ${loadavg()[0]!.toFixed(2)} on ${availableParallelism()} cores`);
    console.log(`environment: each function's own from the template (NODE_OPTIONS=${JSON.stringify(bundles[0]?.environment.NODE_OPTIONS)}), references filled with dummies`);
    const measured = await measure(bundles, endpoint);

    console.log(`goals: bytes <= ${GOAL_BYTES} (1.5 MB), import_ms <= ${GOAL_MS}`);
    for (const m of measured) {
      const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
      console.log(
        `  ${m.bundle.name}: bytes ${verdict(m.bundle.bytes <= GOAL_BYTES)}, import_ms ${verdict(m.totalMs <= GOAL_MS)} ` +
          `(import ${ms(m.importMs)} ms + first call ${ms(m.callMs)} ms with ${m.what}, which ended: ${m.outcomes.join(' | ')})`,
      );
    }
    const slow = measured.filter((m) => m.totalMs > GOAL_MS);
    const big = measured.filter((m) => m.bundle.bytes > GOAL_BYTES);
    if (slow.length > 0) {
      console.log('where the import time goes:');
      // The same NODE_OPTIONS as the functions: source maps cost at import too.
      await whereTimeGoes(scratch, benchEnv('part', { NODE_OPTIONS: bundles[0]?.environment.NODE_OPTIONS }, endpoint));
    }
    if (big.length > 0) {
      console.log(`where the bytes go (top ${TOP_PACKAGES} packages, esbuild's metafile):`);
      await whereBytesGo(big, scratch);
    }
    const met = slow.length === 0 && big.length === 0;
    console.log(`${met ? 'goals met by every bundle' : `goals MISSED by ${[...new Set([...big, ...slow].map((m) => m.bundle.name))].join(', ')}`} (${ms((performance.now() - started) / 1000)} s)`);
    process.exitCode = met ? 0 : 1;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
