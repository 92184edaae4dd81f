// Regression: etcd's Status lists "etcdserver: no leader" among a member's errors during an election.
// Found on a real lab with a frozen leader: the followers counted as unhealthy and the plan blocked
// with NO_QUORUM instead of waiting out the election.
import { describe, expect, it } from 'vitest';
import { plan } from '../../../../functions/core/plan/plan.ts';
import { cluster, fixedRandom, id, policy } from '../fixtures.ts';

const T0 = 600_000;
const electing = { leader: 'none' as const, errors: ['etcdserver: no leader'] };

describe('members without a leader', () => {
  it('stay healthy: the election is judged from leaderId, not held against each member', () => {
    const v = cluster(T0, 3, { override: { 0: { paths: 'timeout' }, 1: electing, 2: electing } });
    expect(v.members.map((m) => m.healthy)).toEqual([false, true, true]);
    expect(v.leader.consensus).toBe('none');
  });

  it('are still unhealthy for any other error', () => {
    const v = cluster(T0, 3, { override: { 1: { ...electing, errors: ['etcdserver: no leader', 'etcdserver: corrupt cluster'] } } });
    expect(v.members[1]?.healthy).toBe(false);
  });

  it('make the plan wait for the election instead of blocking on quorum', () => {
    const decision = plan({
      samples: [cluster(T0, 3, { override: { 0: { paths: 'timeout' }, 1: electing, 2: electing } })],
      targetId: id(0),
      incident: { openedAt: T0, attempt: 0, immediateReprobes: 0 },
      remediation: { retryCount: 0 },
      policy: policy({ electionTimeoutMs: 500 }),
      now: T0,
      random: fixedRandom(0.5),
    });
    expect(decision).toMatchObject({ kind: 'retry', reason: 'ELECTION_IN_PROGRESS', at: T0 + 500 });
  });
});
