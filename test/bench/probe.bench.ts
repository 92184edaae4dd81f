// Probe latency with k of 5 members blackholed: our parallel probe against `etcdctl endpoint status`
// over the same endpoints and the same per-call timeout, measured side by side in one run.
// Goal: ours stays within 1.2 x one call deadline for every k, and each probe found what it should
// (every member listed, each healthy one answered, each blackholed one failed): a probe that
// returned early does not count.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createEtcd3Transport, createProber, directPaths } from '../../functions/adapters/etcd/index.ts';
import type { ProbeSample } from '../../functions/core/common/types.ts';
import { startLab } from '../../infra/lab/lab.ts';
import { median, timeIt } from './measure.ts';
import { checkProbe, type ProbeCheck } from './probe-check.ts';

const run = promisify(execFile);
const MEMBERS = 5;
const DEADLINE_MS = 1_000;
const ROUNDS = 3;

async function etcdctlStatus(endpoints: string[]): Promise<void> {
  const timeout = `${DEADLINE_MS}ms`;
  const args = ['--endpoints', endpoints.join(','), '--dial-timeout', timeout, '--command-timeout', timeout];
  // etcdctl exits non-zero when an endpoint fails; that failure is what we are timing.
  await run(process.env.ETCDCTL_BIN ?? 'etcdctl', [...args, 'endpoint', 'status', '-w', 'json'], {
    env: { ...process.env, ETCDCTL_API: '3' },
  }).catch(() => undefined);
}

async function main(): Promise<void> {
  const lab = await startLab({ members: MEMBERS });
  const transport = createEtcd3Transport();
  const prober = createProber(transport, directPaths);
  const endpoints = lab.endpoints();
  const bound = 1.2 * DEADLINE_MS;
  let allWithin = true;
  try {
    console.log(`members=${MEMBERS} call_deadline_ms=${DEADLINE_MS} rounds=${ROUNDS} (median) bound_ms=${bound}`);
    for (let k = 0; k <= 3; k++) {
      for (let i = 0; i < MEMBERS; i++) await lab.fault(lab.members[i]!.name, i < k ? 'blackhole' : 'heal');
      const names = lab.members.map((m) => m.name);
      const expected = { healthy: names.slice(k), blackholed: names.slice(0, k) };
      const ours: number[] = [];
      const theirs: number[] = [];
      const checks: ProbeCheck[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        let found: ProbeSample | undefined;
        ours.push(await timeIt(async () => (found = await prober.probe({ seeds: endpoints, deadlineMs: DEADLINE_MS }))));
        checks.push(checkProbe(found!, expected));
        theirs.push(await timeIt(() => etcdctlStatus(endpoints)));
      }
      const o = median(ours);
      const e = median(theirs);
      const complete = checks.filter((c) => c.complete).length;
      const within = o <= bound && complete === ROUNDS;
      allWithin &&= within;
      console.log(
        `probe k=${k} ours_ms=${o.toFixed(0)} etcdctl_ms=${e.toFixed(0)} ratio=${(o / e).toFixed(2)} ` +
          `ours_vs_deadline=${(o / DEADLINE_MS).toFixed(2)} complete=${complete}/${ROUNDS} ` +
          `found: ${(checks.find((c) => !c.complete) ?? checks[0]!).says} within_bound=${within ? 'yes' : 'NO'}`,
      );
    }
  } finally {
    try {
      await transport.close();
    } finally {
      await lab.down();
    }
  }
  console.log(allWithin ? 'goal met: every probe complete and within 1.2 x deadline' : 'goal MISSED: see within_bound=NO rows');
  process.exitCode = allWithin ? 0 : 1;
}

await main();
