// Case 22: maintenance under faults. Each row a 5-member lab at a 2 MiB quota on every member,
// filled until NOSPACE and its history compacted (as the API server does), one follower dead and
// reported: the removal waits while maintenance clears the alarm, one member at a time, the leader
// last after a move. A fault strikes mid-maintenance; the quorum checker runs throughout (its puts
// refused for space, its linearizable reads prove the quorum).
import { Etcd3 } from 'etcd3';
import type { EventEnvelope } from '../../events/catalogue.ts';
import { createMemberClient } from '../../functions/adapters/etcd/member-client.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import { startLab, type Lab, type LabMember } from '../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../infra/runtime/runtime.ts';
import { alarmsOf, fillAndCompact, fragment, QUOTA_ARGS } from '../support/fragmented-lab.ts';
import { check, says, type CaseContext, type MatrixCase } from './harness.ts';
import { followersOf, membershipIs } from './lab-checks.ts';

const MEMBERS = 5;

/** The members in etcd's own list order: the order maintenance takes the followers in. */
async function inListOrder(lab: Lab): Promise<LabMember[]> {
  const ids = (await lab.memberList(5_000)).map((m) => m.id);
  return [...lab.members].sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
}

/** Fills the lab to its quota and kills a follower: the target. */
async function atQuotaOneDead(lab: Lab): Promise<{ leader: LabMember; target: LabMember; live: LabMember[] }> {
  const { leader, followers } = await followersOf(lab);
  await fillAndCompact(lab);
  const target = followers[0]!;
  await lab.kill(target.name);
  return { leader, target, live: lab.members.filter((m) => m.id !== target.id) };
}

/** Reports the target; `onAsked` runs once, at the `nth` MaintenanceDue a maintenance step asks for. */
async function reportWhile(ctx: CaseContext, nth: number, onAsked: () => Promise<void>, timeoutMs: number) {
  let asked = 0;
  let struck: Promise<void> | undefined;
  const stop = ctx.pipeline.runtime.bus.subscribe((e) => {
    if (e.detailType !== 'MaintenanceDue' || !e.detail.askedBy.startsWith('maintenance:')) return;
    if (++asked === nth) struck = onAsked();
  });
  try {
    const outcome = await ctx.pipeline.remediate(ctx.arranged.targets[0]!.name, timeoutMs);
    await struck;
    return [outcome];
  } finally {
    stop();
  }
}

/** The steps a run journaled, as its MaintenanceEnded says them; undefined before it ended `outcome`. */
function stepsEnded(events: readonly EventEnvelope[], outcome: string): { key: string; outcome: string; message: string }[] | undefined {
  const ended = events.find((e) => e.detailType === 'MaintenanceEnded' && e.detail.outcome === outcome);
  return ended?.detailType === 'MaintenanceEnded' ? (ended.detail.evidence.steps as { key: string; outcome: string; message: string }[]) : undefined;
}

/** The member a client URL reaches (its proxy or its own port). */
const memberAt = (lab: Lab, endpoint: string): LabMember | undefined => lab.members.find((m) => m.clientUrl === endpoint || m.directUrl === endpoint);

/** The cluster lock's lease revoked, as when its holder's keepalives stop for longer than the lease: the key goes with it. Returns who held it. */
async function revokeClusterLock(lab: Lab): Promise<string> {
  const client = new Etcd3({ hosts: lab.endpoints() });
  try {
    const { kvs } = await client.kv.range({ key: Buffer.from('/etcd-remediator/lock') });
    const lock = kvs[0];
    if (!lock || lock.lease === '0') throw new Error('nobody holds the cluster lock under a lease');
    await client.leaseClient.leaseRevoke({ ID: lock.lease });
    return (JSON.parse(lock.value.toString()) as { owner: string }).owner;
  } finally {
    client.close();
  }
}

/** What every 5-member NOSPACE row shares: the lab at a 2 MiB quota, and a removal's budget that outlasts the maintenance. */
const QUOTA_ROW = {
  members: MEMBERS,
  fast: true,
  policy: { maxAttempts: 60, incidentDeadlineMs: 300_000 },
  start: async () => ({ lab: await startLab({ members: MEMBERS, memberArgs: QUOTA_ARGS(MEMBERS) }) }),
} as const;

/** A problem unless the run's done steps defragmented each of `live`, and no other member. */
function defragmentedEach(doneKeys: readonly string[], live: readonly LabMember[]): string[] {
  const defragmented = doneKeys.filter((k) => k.startsWith('defragment:'));
  const want = live.map((m) => `defragment:${m.id}`).sort();
  return check([...new Set(defragmented)].sort().join() === want.join(), `defragmented ${defragmented.join(', ')}, not each live member`);
}

export const maintenanceCases: MatrixCase[] = [
  {
    n: 22,
    name: 'maintenance-defragmented-member-killed',
    ...QUOTA_ROW,
    expected: 'blocked',
    reason: 'ETCD_NO_SPACE',
    timeoutMs: 90_000,
    async arrange(lab) {
      const { leader, target } = await atQuotaOneDead(lab);
      // The second follower in etcd's order: defragmented by the step the first one asks for.
      const victim = (await inListOrder(lab)).filter((m) => m.id !== leader.id && m.id !== target.id)[1]!;
      return { targets: [target], roles: { victim, leader } };
    },
    // Killed as its defragmentation is asked for: two members down of five leave no margin for another.
    act: (ctx) => reportWhile(ctx, 1, () => ctx.lab.kill(ctx.arranged.roles!.victim!.name), 90_000),
    async verify({ lab, pipeline, arranged }, { deciding }) {
      const target = arranged.targets[0]!;
      return [
        ...says('block', deciding.message, [target.name, 'NOSPACE', 'nothing was removed']),
        ...check(
          /would answer, below the quorum|ended failed/.test(deciding.message),
          `the block does not say why nothing more was defragmented: ${deciding.message.slice(0, 400)}`,
        ),
        ...check(!/disaster|snapshot restore/.test(deciding.message), 'the block sends a person to disaster recovery for a full disk'),
        ...check(pipeline.calls.memberRemove.length === 0, `MemberRemove sent: ${pipeline.calls.memberRemove.join(',')}`),
        ...(await membershipIs(lab, [])),
      ];
    },
  },
  {
    n: 22,
    name: 'maintenance-leader-moved-by-hand',
    ...QUOTA_ROW,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    timeoutMs: 90_000,
    async arrange(lab) {
      const { leader, target, live } = await atQuotaOneDead(lab);
      // The follower defragmented first: a person hands it the leadership mid-maintenance.
      const first = (await inListOrder(lab)).find((m) => m.id !== leader.id && m.id !== target.id)!;
      return { targets: [target], roles: { leader, first, ...Object.fromEntries(live.map((m) => [m.name, m])) } };
    },
    act: (ctx) =>
      reportWhile(
        ctx,
        1,
        async () => {
          const { leader, first } = ctx.arranged.roles!;
          const client = createMemberClient({ endpoint: leader!.directUrl, path: 'direct' });
          try {
            await client.moveLeader(first!.id, 5_000);
          } finally {
            client.close();
          }
        },
        90_000,
      ),
    async verify({ lab, pipeline, arranged }, { outcomes }) {
      const target = arranged.targets[0]!;
      const live = lab.members.filter((m) => m.id !== target.id);
      const ended = pipeline.events.filter((e) => e.detailType === 'MaintenanceEnded');
      const done = ended.find((e) => e.detail.outcome === 'done');
      const keys = ((done?.detail.evidence.steps ?? []) as { key: string; outcome: string }[]).filter((s) => s.outcome === 'done').map((s) => s.key);
      const defragmented = keys.filter((k) => k.startsWith('defragment:'));
      return [
        ...check(outcomes[0]?.detailType === 'RemediationCompleted', `not removed: ${JSON.stringify(outcomes[0]?.detail).slice(0, 300)}`),
        ...check(done !== undefined, `no maintenance ended done: ${ended.map((e) => `${e.detail.outcome} ${e.detail.reason}`).join(', ')}`),
        // Every live member once (the moved leader defragmented as the follower it became), then disarm and the write.
        ...defragmentedEach(defragmented, live),
        ...check(keys.slice(-2).join() === 'disarm,verify', `the run did not end by disarming and checking a write: ${keys.join(', ')}`),
        ...check((await alarmsOf(live)).length === 0, 'an alarm still stands'),
        ...(await membershipIs(lab, [target])),
      ];
    },
  },
  leaderMoveRefused(),
  lockLostMidStep(),
];

/** The removal's first decision: a wait, or (wrongly, mid-defragmentation) an approval. */
function firstLook(events: readonly EventEnvelope[]): EventEnvelope | undefined {
  return events.find((e) => e.detailType === 'RetryRequested' || e.detailType === 'RemediationApproved' || e.detailType === 'RemediationBlocked');
}

/**
 * A fragmentation run (maintenance on, the periodic check) defragments a follower of 3 under the
 * cluster lock, and the lock's lease is revoked mid-step, as a holder's stalled keepalives lose it.
 * A removal of the other follower (reported, answering) then finds the lock free: it must still wait
 * until the defragmentation ends, since removing it with one member stalled leaves 1 of 2 answering.
 */
function lockLostMidStep(): MatrixCase {
  /** MemberRemove calls sent by the time the first follower's defragmentation returned. */
  let removalsByThen: number | undefined;
  return {
    n: 22,
    name: 'maintenance-lock-lost-mid-step',
    members: 3,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    fast: true,
    timeoutMs: 120_000,
    policy: {
      maxAttempts: 60,
      incidentDeadlineMs: 300_000,
      maintenance: { enabled: true, fragmentedShare: 0.2, fragmentedMinBytes: 1024 * 1024, checkEveryMs: 1_000 },
    },
    start: async () => ({ lab: await startLab({ members: 3 }), pipelineOptions: { maintenanceChecks: true } }),
    async arrange(lab) {
      removalsByThen = undefined;
      await fragment(lab, { liveMib: 1, churnMib: 6 });
      const { leader } = await followersOf(lab);
      // Followers in etcd's order: maintenance defragments the first; the second is reported.
      const [first, second] = (await inListOrder(lab)).filter((m) => m.id !== leader.id);
      return { targets: [second!], roles: { leader, first: first! } };
    },
    async act({ lab, pipeline, arranged }) {
      let incident: Promise<TerminalEvent> | undefined;
      pipeline.calls.around = {
        defragment: async (endpoint, send) => {
          if (incident || memberAt(lab, endpoint)?.id !== arranged.roles!.first!.id) return send();
          const holder = await revokeClusterLock(lab);
          if (!holder.startsWith('maintenance:')) throw new Error(`the lock revoked was held by ${holder}, not by the maintenance step`);
          incident = pipeline.remediate(arranged.targets[0]!.name, 120_000);
          // The defragmentation "runs" until the removal has looked once: a large database's takes minutes.
          await waitFor(async () => (firstLook(pipeline.events) ? true : undefined), { timeoutMs: 30_000, what: "the removal's first look" });
          await send();
          removalsByThen = pipeline.calls.memberRemove.length;
        },
      };
      // Wrapped: waitFor would otherwise wait out the incident itself, past its own deadline.
      const started = await waitFor(async () => incident && { incident }, { timeoutMs: 60_000, what: 'the maintenance run to defragment the first follower' });
      return [await started.incident];
    },
    async verify({ pipeline, lab, arranged }, { outcomes }) {
      const first = arranged.roles!.first!;
      const look = firstLook(pipeline.events);
      const detail = (look?.detail ?? {}) as { reason?: string; message?: string };
      return [
        ...check(outcomes[0]?.detailType === 'RemediationCompleted', `not removed: ${JSON.stringify(outcomes[0]?.detail).slice(0, 300)}`),
        ...check(
          look?.detailType === 'RetryRequested' && detail.reason === 'DISRUPTION_IN_PROGRESS',
          `the removal did not wait while ${first.name} was defragmented: ${look?.detailType} ${detail.reason} ${detail.message?.slice(0, 300)}`,
        ),
        ...says('the wait', detail.message ?? '', [first.name, 'is defragmenting it']),
        ...check(removalsByThen === 0, `MemberRemove was sent before ${first.name}'s defragmentation ended (${String(removalsByThen)} by then)`),
        ...(await membershipIs(lab, arranged.targets)),
      ];
    },
  };
}

/**
 * As MoveLeader goes out to the leader for its own defragmentation, a person hands the leadership
 * to another follower: etcd refuses the call ("not leader"). The step is journaled failed and the
 * next ask plans again from what etcd shows: no member is ever defragmented while it leads.
 */
function leaderMoveRefused(): MatrixCase {
  /** Members defragmented while they led, as the lab saw it when each call went out. */
  const defragmentedLeading: string[] = [];
  return {
    n: 22,
    name: 'maintenance-leader-move-refused',
    ...QUOTA_ROW,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    timeoutMs: 120_000,
    async arrange(lab) {
      defragmentedLeading.length = 0;
      const { leader, target } = await atQuotaOneDead(lab);
      return { targets: [target], roles: { leader } };
    },
    async act(ctx) {
      const { lab, pipeline, arranged } = ctx;
      const leader = arranged.roles!.leader!;
      let struck = false;
      pipeline.calls.around = {
        // Who leads as each defragmentation goes out: never the member it runs on.
        defragment: async (endpoint, send) => {
          const on = memberAt(lab, endpoint);
          if (on && on.id === (await lab.leader()).id) defragmentedLeading.push(on.name);
          await send();
        },
        moveLeader: async (_endpoint, send) => {
          if (struck) return send();
          struck = true;
          const transferee = pipeline.calls.moveLeader.at(-1);
          const other = lab.members.find((m) => m.id !== leader.id && m.id !== transferee && lab.runState(m.name) === 'running')!;
          const client = createMemberClient({ endpoint: leader.directUrl, path: 'direct' });
          try {
            await client.moveLeader(other.id, 5_000);
          } finally {
            client.close();
          }
          await lab.waitForLeader({ excluding: [leader.name] });
          await send();
        },
      };
      return [await pipeline.remediate(arranged.targets[0]!.name, 120_000)];
    },
    async verify({ lab, pipeline, arranged }, { outcomes }) {
      const target = arranged.targets[0]!;
      const live = lab.members.filter((m) => m.id !== target.id);
      const leader = arranged.roles!.leader!;
      const steps = stepsEnded(pipeline.events, 'done') ?? [];
      const refused = steps.find((s) => s.key === `move-leader:${leader.id}` && s.outcome === 'failed');
      const done = steps.filter((s) => s.outcome === 'done').map((s) => s.key);
      const defragmented = done.filter((k) => k.startsWith('defragment:'));
      return [
        ...check(outcomes[0]?.detailType === 'RemediationCompleted', `not removed: ${JSON.stringify(outcomes[0]?.detail).slice(0, 300)}`),
        ...check(defragmentedLeading.length === 0, `defragmented while it led: ${defragmentedLeading.join(', ')}`),
        ...check(refused !== undefined, `no refused move off the leader journaled: ${steps.map((s) => `${s.key} ${s.outcome}`).join(', ')}`),
        ...check(refused === undefined || /not leader/.test(refused.message), `the refused move does not give etcd's words: ${refused?.message}`),
        // The leader the move was refused for was defragmented after it, as the follower it had become.
        ...check(
          refused !== undefined && steps.findIndex((s) => s.key === `defragment:${leader.id}` && s.outcome === 'done') > steps.indexOf(refused),
          `${leader.name} was not defragmented after the refused move: ${steps.map((s) => `${s.key} ${s.outcome}`).join(', ')}`,
        ),
        ...defragmentedEach(defragmented, live),
        ...check((await alarmsOf(live)).length === 0, 'an alarm still stands'),
        ...(await membershipIs(lab, [target])),
      ];
    },
  };
}
