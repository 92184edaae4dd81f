// npm run bench:cost — what one incident costs on the deployed-stack sim (150 ms a hop), counted
// as AWS bills it (cost-count.ts): the seed case under its lab policy, the seed case under the
// default policy (a 60 s grace window, so about a minute and a half), and an incident stuck on an
// election for its whole 30-minute deadline. The stuck one is the product planner's own schedule
// (cost-stuck.ts) priced with what a round costs as measured on the seed run's waiting rounds; the
// model of a round (one probe, one plan, one schedule-retry, three events) is checked against the
// seed run's own counts first.
import { defaultPolicy, type PolicyInput } from '../../functions/core/policy/policy.ts';
import { startLab, type Lab } from '../../infra/lab/lab.ts';
import { costSince, describeCost, marksOf, type IncidentCost } from '../support/aws-sim/cost-count.ts';
import { startDeployedStack, type DeployedStack } from '../support/aws-sim/deployed-stack.ts';
import { registerLab, reportUnhealthy } from '../support/aws-sim/lab-on-stack.ts';
import { seedPolicy } from '../support/aws-sim/seed-case-run.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import { synthStack } from '../infra/synth.ts';
import { stuckSchedule } from './cost-stuck.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);

async function seedRun(
  stack: DeployedStack,
  policy: PolicyInput,
  clusterId: string,
  lab: Lab,
): Promise<{ cost: IncidentCost; roundMs: number; rounds: number; writesPerRound: number }> {
  const leader = await lab.leader();
  await lab.fault(leader.name, 'cut');
  await registerLab(stack, lab, policy, clusterId);
  const marks = marksOf(stack);
  await reportUnhealthy(stack, leader.name, clusterId);
  const mine = () => stack.eventBridge.accepted.slice(marks.accepted).filter((e) => (e.event.detail as { clusterId?: string }).clusterId === clusterId);
  await waitFor(async () => mine().find((e) => /^Remediation(Completed|Blocked|Failed|Closed)$/.test(e.event['detail-type'])), {
    timeoutMs: 300_000,
    intervalMs: 200,
    what: `${clusterId}: the incident's end`,
  });
  await stack.eventBridge.idle();
  const events = mine();
  // A waiting round: RetryRequested to the MembersProbed of its RetryDue; what it adds to its wait.
  const extra: number[] = [];
  for (const requested of events.filter((e) => e.event['detail-type'] === 'RetryRequested')) {
    const due = Date.parse((requested.event.detail as { retryAt: string }).retryAt);
    const probed = events.find((e) => e.event['detail-type'] === 'MembersProbed' && e.acceptedAt > requested.acceptedAt);
    if (probed) extra.push(probed.acceptedAt - due);
  }
  const roundMs = extra.length > 0 ? Math.round(extra.reduce((a, b) => a + b, 0) / extra.length) : 0;
  // DynamoDB writes of the waiting rounds: from the first MembersProbed to the last one before the end.
  const probes = events.filter((e) => e.event['detail-type'] === 'MembersProbed');
  const [from, to] = [probes[0]?.acceptedAt ?? 0, probes.at(-1)?.acceptedAt ?? 0];
  const written = stack.dynamo.slice(marks.dynamo).filter((x) => x.at > from && x.at <= to && WRITES.has(x.operation)).length;
  return { cost: await costSince(stack, marks), roundMs, rounds: extra.length, writesPerRound: extra.length > 0 ? written / extra.length : 0 };
}

// The labs first: etcd 3.4 refuses reconfiguration for ~5 s after its members connect, and the
// synth takes about that long, so no removal is refused for it (a refusal would cost a round).
const labs = Promise.all([startLab({ members: 3, electionTimeoutMs: 500 }), startLab({ members: 3, electionTimeoutMs: 1_000 })]);
out('synthesizing the stack and bundling its functions …');
const synth = synthStack();
const [seedLab, defaultLab] = await labs;
const stack = await startDeployedStack(synth.json, synth.assemblyDir);
try {
  out('\n1. the seed case, its lab policy (grace 3 s, election timeout 500 ms):');
  const seed = await seedRun(stack, seedPolicy, 'seed', seedLab);
  for (const line of describeCost(seed.cost)) out(`   ${line}`);
  // The round model, checked on the seed run: each waiting round is one probe, one plan and one schedule-retry.
  const n = seed.rounds;
  const inv = seed.cost.invocations;
  const model = { 'probe-members': n + 1, 'move-leader': n + 1, 'schedule-retry': n };
  const holds = Object.entries(model).every(([fn, count]) => inv[fn] === count);
  out(
    `   ${n} waiting rounds, each adding ${seed.roundMs} ms of hops and work to its wait; round model (probe ${n + 1}, plan ${n + 1}, schedule-retry ${n}): ${holds ? 'holds' : `DOES NOT HOLD (${JSON.stringify(inv)})`}`,
  );
  const { writesPerRound } = seed;

  out('\n2. the seed case, the default policy (grace 60 s, election timeout 1 s, backoff 5 s to 5 min):');
  const def = await seedRun(stack, {}, 'default', defaultLab);
  for (const line of describeCost(def.cost)) out(`   ${line}`);

  out(
    `\n3. stuck: no leader settles (ELECTION_IN_PROGRESS on every look) until the ${defaultPolicy.incidentDeadlineMs / 60_000}-minute deadline, default policy:`,
  );
  const stuck = stuckSchedule(defaultPolicy, seed.roundMs);
  const retries = stuck.looks - 1;
  out(`   ${stuck.looks} looks over ${(stuck.elapsedMs / 60_000).toFixed(1)} min, ending ${stuck.ending.kind} ${stuck.ending.reason}`);
  out(`   invocations ${2 * stuck.looks + retries}: probe-members ${stuck.looks}, move-leader ${stuck.looks}, schedule-retry ${retries}`);
  out(
    `   events ${1 + stuck.looks + 2 * retries + 1}: MemberUnhealthy 1, MembersProbed ${stuck.looks}, RetryRequested ${retries}, RetryDue ${retries}, RemediationBlocked 1`,
  );
  out(`   short waits (SQS sends) ${stuck.shortWaits}; schedules created ${stuck.schedules}`);
  out(
    `   DynamoDB writes about ${Math.round(writesPerRound * retries)} (${writesPerRound.toFixed(1)} a waiting round, as on the seed run), plus the opening and the block`,
  );
} finally {
  await stack.close();
  await Promise.all([seedLab.down(), defaultLab.down()]);
}
