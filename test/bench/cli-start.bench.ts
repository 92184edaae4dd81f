// How long a command takes to start: the bin on the command line's bundle (infra/build/cli-build.ts)
// against the same bin on the sources (ETCD_REMEDIATOR_DEBUG runs them), each command's `--help`,
// which loads the command's whole module graph and returns. Runs alternate, so whatever else the
// machine does slows both alike; the figure is the ratio of the medians. Goal: every command
// starts in at most 0.8 x the sources' time. One `command NAME bundle_ms=B sources_ms=S ratio=R`
// line each, then the goal.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureCli } from '../../infra/build/cli-build.ts';
import { median } from './measure.ts';

const BIN = fileURLToPath(new URL('../../bin/etcd-remediator.mjs', import.meta.url));
const COMMANDS = ['status', 'probe', 'plan', 'remediate', 'run', 'watch', 'register', 'lab'];
const RUNS = 7;
const GOAL_RATIO = 0.8;

function startMs(command: string, fromSources: boolean): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, [BIN, command, '--help'], {
    env: { ...process.env, ETCD_REMEDIATOR_DEBUG: fromSources ? '1' : '' },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`${command} --help exited ${run.status}: ${run.stderr}`);
  return performance.now() - started;
}

await ensureCli();
let missed = 0;
for (const command of COMMANDS) {
  // One of each first, unmeasured: the compile cache is warm for both.
  startMs(command, false);
  startMs(command, true);
  const bundle: number[] = [];
  const sources: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    bundle.push(startMs(command, false));
    sources.push(startMs(command, true));
  }
  const ratio = median(bundle) / median(sources);
  if (ratio > GOAL_RATIO) missed++;
  process.stdout.write(`command ${command} bundle_ms=${Math.round(median(bundle))} sources_ms=${Math.round(median(sources))} ratio=${ratio.toFixed(2)}\n`);
}
process.stdout.write(
  missed === 0
    ? `goal met: every command starts in <= ${GOAL_RATIO} x the sources' time\n`
    : `goal missed by ${missed} command(s): > ${GOAL_RATIO} x the sources' time\n`,
);
process.exitCode = missed === 0 ? 0 : 1;
