// Case 22: maintenance under faults. Each row a 5-member lab at a 2 MiB quota on every member,
// filled until NOSPACE and its history compacted (as the API server does), one follower dead and
// reported: the removal waits while maintenance clears the alarm, one member at a time, the leader
// last after a move. A fault strikes mid-maintenance; the quorum checker runs throughout (its puts
// refused for space, its linearizable reads prove the quorum).
import { createMemberClient } from '../../functions/adapters/etcd/member-client.ts';
import { startLab, type Lab, type LabMember } from '../../infra/lab/lab.ts';
import { alarmsOf, fillAndCompact, QUOTA_ARGS } from '../support/fragmented-lab.ts';
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

export const maintenanceCases: MatrixCase[] = [
  {
    n: 22,
    name: 'maintenance-defragmented-member-killed',
    members: MEMBERS,
    expected: 'blocked',
    reason: 'ETCD_NO_SPACE',
    fast: true,
    timeoutMs: 90_000,
    policy: { maxAttempts: 60, incidentDeadlineMs: 300_000 },
    start: async () => ({ lab: await startLab({ members: MEMBERS, memberArgs: QUOTA_ARGS(MEMBERS) }) }),
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
    members: MEMBERS,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    fast: true,
    timeoutMs: 90_000,
    policy: { maxAttempts: 60, incidentDeadlineMs: 300_000 },
    start: async () => ({ lab: await startLab({ members: MEMBERS, memberArgs: QUOTA_ARGS(MEMBERS) }) }),
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
        ...check(
          [...new Set(defragmented)].sort().join() ===
            live
              .map((m) => `defragment:${m.id}`)
              .sort()
              .join(),
          `defragmented ${defragmented.join(', ')}, not each live member once`,
        ),
        ...check(keys.slice(-2).join() === 'disarm,verify', `the run did not end by disarming and checking a write: ${keys.join(', ')}`),
        ...check((await alarmsOf(live)).length === 0, 'an alarm still stands'),
        ...(await membershipIs(lab, [target])),
      ];
    },
  },
];
