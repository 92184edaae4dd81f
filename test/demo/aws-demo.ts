// npm run demo:aws [-- --runs N] — the seed case on the AWS wiring, on this machine: the stack is
// synthesized, its bundles run as warm containers, the real AWS SDK clients talk to
// protocol-level fakes of EventBridge (routing by the synthesized rules), Scheduler, SQS and the
// Pipe that follow AWS's documentation, every hop 150 ms (the published median
// EventBridge-to-Lambda latency); the store is DynamoDB on dynalite, and each run's cluster is a
// fresh 3-member etcd lab with the leader's path cut. Each run is timed beside the local embedded
// runtime's on a lab of its own; with several runs, the medians.
import { parseArgs } from 'node:util';
import { startLab, type Lab } from '../../infra/lab/lab.ts';
import { HOP_LATENCY_MS, startDeployedStack } from '../support/aws-sim/deployed-stack.ts';
import { leaderElectedAt, median, SEED_BOUND_MS, SEED_ELECTION_MS, seedCaseLocal, seedCaseOnStack, seedPolicy } from '../support/aws-sim/seed-case-run.ts';
import { synthStack } from '../infra/synth.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);

const { values } = parseArgs({ options: { runs: { type: 'string', default: '1' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 20) {
  process.stderr.write(`--runs: must be a whole number from 1 to 20, got ${JSON.stringify(values.runs)}\n`);
  process.exit(2);
}

const startPair = () =>
  Promise.all([startLab({ members: 3, electionTimeoutMs: SEED_ELECTION_MS }), startLab({ members: 3, electionTimeoutMs: SEED_ELECTION_MS })]);
const labs: Lab[] = [];
// The labs first: etcd 3.4 refuses reconfiguration for ~5 s after its members connect, and the
// synth takes about that long, so the timing below is the wiring's, not a fresh lab's.
out(`1. a real 3-member etcd lab on loopback for each side of run 1 of ${runs}`);
let pair = startPair();
out('2. synthesizing the stack and bundling its functions …');
const synth = (() => {
  try {
    return synthStack();
  } catch (error) {
    void pair.then((p) => Promise.all(p.map((l) => l.down())));
    throw error;
  }
})();
out(`   done in ${synth.ms} ms (${synth.assemblyDir})`);
const stack = await startDeployedStack(synth.json, synth.assemblyDir);
const aws: number[] = [];
const local: number[] = [];
try {
  for (let run = 1; run <= runs; run++) {
    const [awsLab, localLab] = await pair;
    labs.push(awsLab, localLab);
    // The next run's labs start now, so they are past etcd's reconfiguration guard when their turn comes.
    if (run < runs) pair = startPair();
    const clusterId = `lab-${run}`;
    const shown = stack.eventBridge.accepted.length;
    // Each run is a fresh cluster on the one stack: by the second, every registered cluster has had
    // an incident within the storm window, and the storm guard would rightly defer its removal
    // (FLEET_STORM). The runs time one incident each, so the guard counts no fewer than all of them.
    const awsRun = await seedCaseOnStack(stack, awsLab, clusterId, 60_000, { ...seedPolicy, fleet: { stormMinClusters: runs + 1 } });
    const started = leaderElectedAt(awsRun.completed.event.detail) - awsRun.tookMs;
    out(`3. run ${run}: MemberUnhealthy for ${awsRun.leader.name} (the leader, its client path cut) on bus ${stack.busName}; events as the bus accepted them:`);
    for (const { event, acceptedAt } of stack.eventBridge.accepted.slice(shown)) {
      const detail = event.detail as { reason?: string; clusterId?: string; message?: string };
      if (detail.clusterId !== clusterId) continue;
      out(`   +${((acceptedAt - started) / 1000).toFixed(2)}s  ${event['detail-type'].padEnd(21)} ${detail.reason ?? ''}`);
      if (event['detail-type'] === 'RetryRequested' && detail.reason === 'ETCD_TRANSIENT') out(`           ${String(detail.message)}`);
    }
    const invocations = stack.invocations.length - awsRun.invokedFrom;
    const events = stack.eventBridge.accepted.length - awsRun.acceptedFrom;
    const { tookMs: localMs } = await seedCaseLocal(localLab);
    aws.push(awsRun.tookMs);
    local.push(localMs);
    out(
      `   run ${run}: event → new leader ${awsRun.tookMs} ms on the AWS wiring (${HOP_LATENCY_MS} ms a hop), ${localMs} ms on the local runtime; ${invocations} invocations, ${events} events`,
    );
    await Promise.all([awsLab.down(), localLab.down()]);
  }
  const m = median(aws);
  out(`4. bound grace + 2 × election timeout + 1 s = ${SEED_BOUND_MS} ms`);
  out(`   AWS wiring: ${aws.join(', ')} ms; median ${m} ms: ${m <= SEED_BOUND_MS ? 'inside' : 'outside'} the bound`);
  out(`   local runtime: ${local.join(', ')} ms; median ${median(local)} ms`);
} finally {
  await stack.close();
  await Promise.all(labs.map((l) => l.down().catch(() => undefined)));
  if (labs.length < 2 * runs) await pair.then((p) => Promise.all(p.map((l) => l.down()))).catch(() => undefined);
}
