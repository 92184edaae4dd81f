// Cold start of the six Lambda bundles, each held to a baseline measured beside it: a handler
// with only the EventBridge client and the Powertools logger, making the same first call (a
// PutEvents, refused), bundled by the same build. Each bundle's cold starts alternate with the
// baseline's, so whatever else the machine does slows both alike; the goal is a ratio. Goals:
// every bundle <= 1.0 MB loaded at a cold start; import + first call <= 1.5 x the baseline's,
// schedule-retry and the intake <= 1.2 x. One `bundle NAME bytes=N import_ms=M baseline_ms=B
// ratio=R` line each, for scripts; then the goals, and where the bytes and the time go. A pipeline
// function loads its etcd client only at its first etcd access (functions/aws-wiring/
// etcd-on-demand.ts), after the first call's refused AWS call: its line also says what loading
// that chunk adds (with_etcd_bytes, with_etcd_ms, ratio_with_etcd), and both figures are held to
// the goals.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackFunctionNames } from '../../infra/cdk/function-specs.ts';
import { buildBaseline, synthBundles, type DeployedBundle } from './coldstart/bundles.ts';
import { benchEnv, coldStart, coldStarts, median, refusedPort, type ColdStartRun } from './coldstart/cold-start.ts';
import { firstEvent } from './coldstart/first-events.ts';
import type { ChildResult } from './coldstart/protocol.ts';
import { analyseFunction, buildPart, foldersOf, packageOf, PARTS, sumBy } from './coldstart/where.ts';

const RUNS = 7;
const PART_RUNS = 5;
const TOP_PACKAGES = 8;
const GOAL_BYTES = 1_000_000;
const GOAL_RATIO = 1.5;
/** The two that talk to no cluster carry no etcd or Kubernetes client: held closer to the baseline. */
const GOAL_RATIO_NO_CLUSTER: Readonly<Record<string, number>> = { 'schedule-retry': 1.2, intake: 1.2 };

const kb = (bytes: number): string => `${(bytes / 1000).toFixed(0)} kB`;
const ms = (x: number): number => Math.round(x);
const total = (r: ChildResult): number => r.importMs + r.callMs;

interface Measured {
  bundle: DeployedBundle;
  importMs: number;
  callMs: number;
  totalMs: number;
  /** The median of the baseline's cold starts made alternately with this bundle's. */
  baselineMs: number;
  ratio: number;
  goalRatio: number;
  outcomes: string[];
  what: string;
  /** The same cold starts with the etcd chunk imported after the call, for the functions that have one. */
  withEtcd?: { bytes: number; totalMs: number; chunkMs: number; ratio: number };
}

/** RUNS rounds; in each, every bundle's cold start right after one of the baseline's. */
async function measure(bundles: DeployedBundle[], baseline: ColdStartRun, endpoint: string): Promise<Measured[]> {
  const runs = bundles.map((bundle) => {
    const { event, what } = firstEvent(bundle.name);
    const run: ColdStartRun = {
      file: bundle.file,
      functionName: bundle.name,
      event,
      env: benchEnv(bundle.name, bundle.environment, endpoint),
      ...(bundle.etcdChunk ? { later: bundle.etcdChunk.file } : {}),
    };
    return { bundle, what, run, own: [] as ChildResult[], base: [] as ChildResult[] };
  });
  for (let round = 0; round < RUNS; round++) {
    for (const r of runs) {
      r.base.push(await coldStart(baseline));
      r.own.push(await coldStart(r.run));
    }
  }
  return runs.map(({ bundle, what, own, base }) => {
    const totalMs = median(own.map(total));
    const baselineMs = median(base.map(total));
    const m: Measured = {
      bundle,
      what,
      importMs: median(own.map((x) => x.importMs)),
      callMs: median(own.map((x) => x.callMs)),
      totalMs,
      baselineMs,
      ratio: totalMs / baselineMs,
      goalRatio: GOAL_RATIO_NO_CLUSTER[bundle.name] ?? GOAL_RATIO,
      outcomes: [...new Set(own.map((x) => x.outcome))],
    };
    let line = `bundle ${bundle.name} bytes=${bundle.bytes} import_ms=${ms(totalMs)} baseline_ms=${ms(baselineMs)} ratio=${m.ratio.toFixed(2)}`;
    if (bundle.etcdChunk) {
      const withEtcdMs = median(own.map((x) => total(x) + (x.laterMs ?? Number.NaN)));
      m.withEtcd = {
        bytes: bundle.bytes + bundle.etcdChunk.bytes,
        totalMs: withEtcdMs,
        chunkMs: median(own.map((x) => x.laterMs ?? Number.NaN)),
        ratio: withEtcdMs / baselineMs,
      };
      line += ` with_etcd_bytes=${m.withEtcd.bytes} with_etcd_ms=${ms(withEtcdMs)} ratio_with_etcd=${m.withEtcd.ratio.toFixed(2)}`;
    }
    console.log(line);
    return m;
  });
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
    const nodeOptions = bundles[0]?.environment.NODE_OPTIONS;
    const baseline = await buildBaseline(scratch, { NODE_OPTIONS: nodeOptions, BUS_NAME: 'etcd-remediator-bench-bus' });
    const endpoint = `http://127.0.0.1:${await refusedPort()}`;
    const baselineRun: ColdStartRun = { file: baseline.file, functionName: 'baseline', event: {}, env: benchEnv('baseline', baseline.environment, endpoint) };
    console.log(
      `cold start on Node ${process.version}: the ${bundles.length} bundles CDK wrote at synth (NodejsFunction, infra/cdk/bundling.ts), median of ${RUNS} fresh processes each`,
    );
    console.log(
      `import_ms = import of index.mjs + one handler call (the function's first event; its first AWS call is refused at ${endpoint}, one SDK attempt)`,
    );
    console.log(
      'bytes = what a cold start loads: index.mjs and the chunks it imports statically (a chunk only a dynamic import() reaches, the etcd or Kubernetes client, is not counted; source maps are not)',
    );
    console.log(
      "with_etcd = the same, and the etcd chunk (its files beyond index.mjs's) imported after the call, as a pipeline function's first etcd access loads it; the Kubernetes chunk is left out of both",
    );
    console.log(
      `baseline: the EventBridge client and the Powertools logger alone, one PutEvents (${baseline.bytes} bytes in ${baseline.files} files); its cold starts alternate with each bundle's`,
    );
    // Other work on the machine slows every figure; say how busy it was.
    console.log(`load average before: ${loadavg()[0]!.toFixed(2)} on ${availableParallelism()} cores`);
    console.log(`environment: each function's own from the template (NODE_OPTIONS=${JSON.stringify(nodeOptions)}), references filled with dummies`);
    const measured = await measure(bundles, baselineRun, endpoint);

    console.log(
      `goals: bytes <= ${GOAL_BYTES} (1.0 MB), import_ms <= ${GOAL_RATIO} x the baseline's (schedule-retry and intake ${GOAL_RATIO_NO_CLUSTER.intake} x)`,
    );
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    for (const m of measured) {
      const etcd = m.withEtcd
        ? `; with the etcd chunk: bytes ${verdict(m.withEtcd.bytes <= GOAL_BYTES)} ${m.withEtcd.bytes}, ratio ${verdict(m.withEtcd.ratio <= m.goalRatio)} ${m.withEtcd.ratio.toFixed(2)} <= ${m.goalRatio} (the chunk ${ms(m.withEtcd.chunkMs)} ms)`
        : '';
      console.log(
        `  ${m.bundle.name}: bytes ${verdict(m.bundle.bytes <= GOAL_BYTES)} (${m.bundle.files} files), ratio ${verdict(m.ratio <= m.goalRatio)} ${m.ratio.toFixed(2)} <= ${m.goalRatio} ` +
          `(import ${ms(m.importMs)} ms + first call ${ms(m.callMs)} ms with ${m.what}, which ended: ${m.outcomes.join(' | ')})${etcd}`,
      );
    }
    const slow = measured.filter((m) => m.ratio > m.goalRatio);
    const big = measured.filter((m) => m.bundle.bytes > GOAL_BYTES);
    const slowWithEtcd = measured.filter((m) => m.withEtcd && m.withEtcd.ratio > m.goalRatio);
    const bigWithEtcd = measured.filter((m) => m.withEtcd && m.withEtcd.bytes > GOAL_BYTES);
    if (slow.length > 0 || slowWithEtcd.length > 0) {
      console.log('where the import time goes:');
      // The same NODE_OPTIONS as the functions: source maps cost at import too.
      await whereTimeGoes(scratch, benchEnv('part', { NODE_OPTIONS: nodeOptions }, endpoint));
    }
    if (big.length > 0) {
      console.log(`where the bytes go (top ${TOP_PACKAGES} packages of the files a cold start loads, esbuild's metafile):`);
      await whereBytesGo(big, scratch);
    }
    const names = (list: Measured[]): string => [...new Set(list.map((m) => m.bundle.name))].join(', ');
    const firstCall = [...big, ...slow];
    const etcdToo = [...bigWithEtcd, ...slowWithEtcd];
    const said = [
      firstCall.length === 0 ? 'goals met by every bundle on import + first call' : `goals MISSED on import + first call by ${names(firstCall)}`,
      etcdToo.length === 0 ? 'and by every pipeline bundle with its etcd chunk loaded' : `with the etcd chunk loaded, MISSED by ${names(etcdToo)}`,
    ];
    console.log(`${said.join('; ')} (${ms((performance.now() - started) / 1000)} s)`);
    process.exitCode = firstCall.length === 0 && etcdToo.length === 0 ? 0 : 1;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
