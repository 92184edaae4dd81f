import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../../functions/core/common/decision.ts';
import { withRemovalPermission, type PermissionAnswer } from '../../../../functions/core/plan/removal-permission.ts';

const base = { message: 'as planned', evidence: { from: 'planner' } };
const decisions: Record<Decision['kind'], Decision> = {
  'move-leader': { kind: 'move-leader', reason: 'LEADER_MOVE_REQUIRED', leaderId: 'a1', candidates: ['b2'], paths: ['direct'], ...base },
  approve: { kind: 'approve', reason: 'TARGET_IS_FOLLOWER', leaderMove: 'not-needed', ...base },
  retry: { kind: 'retry', reason: 'ELECTION_IN_PROGRESS', at: 5, reprobeNow: false, ...base },
  block: { kind: 'block', reason: 'QUORUM_AT_RISK', ...base },
  close: { kind: 'close', reason: 'TARGET_RECOVERED', ...base },
};
const via = 'etcd-2 (b2) over direct http://10.0.0.2:2379';
const refused = (message: string, kind: 'auth' | 'other' | 'tls' = 'auth'): PermissionAnswer => ({ permitted: false, via, failure: { kind, message } });
const ctx = { who: 'etcd-1 (a1)', user: undefined };

describe('withRemovalPermission', () => {
  it.each([
    { name: 'permitted', decision: decisions['move-leader'], answer: { permitted: true as const, via } },
    { name: 'nobody could be asked', decision: decisions['move-leader'], answer: undefined },
    {
      name: 'a refusal that is not about credentials (left to the removal)',
      decision: decisions.approve,
      answer: refused('etcdserver: request timed out', 'other'),
    },
    { name: 'a TLS failure on a healthy member (left to the removal)', decision: decisions.approve, answer: refused('certificate verify failed', 'tls') },
    { name: 'a retry needs no permission yet', decision: decisions.retry, answer: refused('etcdserver: user name is empty') },
    { name: 'a block stands as it is', decision: decisions.block, answer: refused('etcdserver: permission denied') },
    { name: 'a close removes nothing', decision: decisions.close, answer: refused('etcdserver: permission denied') },
  ])('keeps the decision: $name', ({ decision, answer }) => {
    expect(withRemovalPermission(decision, answer, ctx)).toBe(decision);
  });

  it('blocks a move for no user before leadership moves, saying how to give one', () => {
    const d = withRemovalPermission(decisions['move-leader'], refused('etcdserver: user name is empty'), ctx);
    expect(d).toMatchObject({ kind: 'block', reason: 'AUTH_FAILED' });
    expect(d.message).toBe(
      "Removing etcd-1 (a1) needs etcd's root role, and etcd refuses it to no user (etcd-2 (b2) over direct http://10.0.0.2:2379: etcdserver: user name is empty); " +
        "leadership was not moved and nothing was removed; blocked, give an etcd user with the root role: --user NAME with --password-file F or ETCDCTL_PASSWORD (in run's config: auth.user and auth.passwordFile).",
    );
    expect(d.evidence).toEqual({
      wouldDo: 'move-leader',
      wouldBe: 'LEADER_MOVE_REQUIRED',
      permission: { user: null, via, failure: { kind: 'auth', message: 'etcdserver: user name is empty' } },
    });
  });

  it('blocks an approval for a user without the root role, naming the user; a gRPC code alone is enough', () => {
    const answer: PermissionAnswer = { permitted: false, via, failure: { kind: 'other', message: 'denied', grpcCode: 7 } };
    const d = withRemovalPermission(decisions.approve, answer, { who: 'etcd-1 (a1)', user: 'operator' });
    expect(d).toMatchObject({ kind: 'block', reason: 'AUTH_FAILED' });
    expect(d.message).toContain('refuses it to user operator (');
    expect(d.message).toContain('; nothing was removed; blocked');
    expect(d.message).not.toContain('leadership');
  });
});
