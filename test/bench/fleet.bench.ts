// npm run bench:fleet [-- --part A|B|C] [--clusters N] [--incidents N] [--profile] [--lift resume|cooldown]
// One line a part, `fleet part=X key=value …`, for a script to read (see README "Fleet benchmark").
// A: the pipeline alone on instant etcd (goal ≥ 1,000 incidents a minute), then the cost of one
//    report at history 0 and 1,000 side by side; --profile runs A under --cpu-prof and prints the
//    entries with the most self time. B: 10 real 3-member clusters, every leader cut, one run
//    service. C: B under a storm threshold below the fleet. Exit 1 when a goal or a check fails.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { historyLine, pipelineLine, runHistoryCost, runPipeline } from './fleet-pipeline.ts';
import { profileLines, readProfile } from './fleet-profile.ts';
import { realLine, runReal } from './fleet-real.ts';

const GOAL_PER_MIN = 1_000;

const usage = 'usage: npm run bench:fleet -- [--part A|B|C] [--clusters N] [--incidents N] [--profile] [--lift resume|cooldown]';

function fail(message: string): never {
  console.error(`bench:fleet: ${message}\n${usage}`);
  process.exit(2);
}

const { values } = parseArgs({
  options: {
    part: { type: 'string' },
    clusters: { type: 'string' },
    incidents: { type: 'string' },
    history: { type: 'string', default: '1000' },
    profile: { type: 'boolean', default: false },
    lift: { type: 'string', default: 'resume' },
  },
  strict: true,
});

const positive = (flag: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) fail(`--${flag} ${value}: not a positive whole number`);
  return n;
};
const part = values.part?.toUpperCase();
if (part !== undefined && !['A', 'B', 'C'].includes(part)) fail(`--part ${values.part}: must be A, B or C`);
const lifts = ['resume', 'cooldown'] as const;
const lift = lifts.find((l) => l === values.lift) ?? fail(`--lift ${values.lift}: must be resume or cooldown`);
const clusters = positive('clusters', values.clusters);
const incidents = positive('incidents', values.incidents);
const history = positive('history', values.history)!;
const parts = part ? [part] : ['A', 'B', 'C'];

/** Part A again, in a child under --cpu-prof; prints its lines, then where its time went. */
async function profiled(): Promise<boolean> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-profile-'));
  const args = [
    `--cpu-prof`,
    `--cpu-prof-dir=${dir}`,
    process.argv[1]!,
    '--part',
    'A',
    '--history',
    String(history),
    ...(clusters ? ['--clusters', String(clusters)] : []),
    ...(incidents ? ['--incidents', String(incidents)] : []),
  ];
  const code = await new Promise<number | null>((resolve) => spawn(process.execPath, args, { stdio: 'inherit' }).on('close', resolve));
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file) for (const line of profileLines(readProfile(path.join(dir, file)), 15)) console.log(line);
  fs.rmSync(dir, { recursive: true, force: true });
  return code === 0 && file !== undefined;
}

let ok = true;
for (const p of parts) {
  if (p === 'A' && values.profile) {
    ok = (await profiled()) && ok;
    continue;
  }
  if (p === 'A') {
    const n = clusters ?? 500;
    const result = await runPipeline({ clusters: n, incidentsPerCluster: Math.max(1, Math.round((incidents ?? 5_000) / n)) });
    const ended = Object.values(result.endings).reduce((a, b) => a + b, 0);
    console.log(pipelineLine(result));
    console.log(
      `fleet part=A endings=${Object.entries(result.endings)
        .map(([type, count]) => `${type}:${count}`)
        .join(',')} goal_per_min=${GOAL_PER_MIN} goal=${result.perMin >= GOAL_PER_MIN ? 'met' : 'MISSED'}`,
    );
    ok &&= ended === result.incidents && result.perMin >= GOAL_PER_MIN;
    const cost = await runHistoryCost({ history, reports: 20 });
    console.log(historyLine(cost));
  } else {
    const storm = p === 'C' ? { lift } : undefined;
    const result = await runReal({ clusters: clusters ?? 10, ...(storm ? { storm } : {}) });
    console.log(realLine(result, storm));
    for (const problem of result.problems) console.log(`fleet part=${p} problem: ${problem}`);
    const stormHeld = !storm || (result.deferred === result.clusters && result.harmed === 0 && (result.firstRemovalMs ?? 0) >= (result.liftedMs ?? Infinity));
    ok &&= result.quorumHeld === result.clusters && result.removed === result.clusters && stormHeld;
  }
}
process.exitCode = ok ? 0 : 1;
