// Checks that matrix cases share: who leads, what etcd's member list says, what a removal said.
import type { LeaderMove } from '../../functions/core/common/decision.ts';
import type { Lab, LabMember } from '../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../infra/runtime/runtime.ts';
import { check } from './harness.ts';

export const followersOf = async (lab: Lab): Promise<{ leader: LabMember; followers: LabMember[] }> => {
  const leader = await lab.leader();
  return { leader, followers: lab.members.filter((m) => m.id !== leader.id && !m.isLearner) };
};

export const memberIds = async (lab: Lab): Promise<string[]> => (await lab.memberList()).map((m) => m.id).sort();
export const idsWithout = (lab: Lab, gone: string[]): string[] =>
  lab.members
    .filter((m) => !gone.includes(m.id))
    .map((m) => m.id)
    .sort();

/** etcd's own member list has lost exactly `gone`. */
export async function membershipIs(lab: Lab, gone: LabMember[]): Promise<string[]> {
  const now = await memberIds(lab);
  const want = idsWithout(
    lab,
    gone.map((m) => m.id),
  );
  return check(JSON.stringify(now) === JSON.stringify(want), `member list ${now.join(',')}, expected ${want.join(',')}`);
}

/** Gate evidence of a decision, as the quorum gate records it. */
export const gateOf = (evidence: Record<string, unknown>): Record<string, unknown> => (evidence.gate ?? {}) as Record<string, unknown>;

/** The outcome removed `member` (with `leaderMove`, when given) and names a new leader other than it. */
export function removedWithNewLeader(o: TerminalEvent, member: LabMember, leaderMove?: LeaderMove): string[] {
  const ok = o.detailType === 'RemediationCompleted' && (leaderMove === undefined || o.detail.leaderMove === leaderMove) && o.detail.newLeader.id !== member.id;
  return check(
    ok,
    `${member.name} not removed${leaderMove ? ` with leaderMove ${leaderMove}` : ''} with another member leading: ${JSON.stringify(o.detail).slice(0, 300)}`,
  );
}
