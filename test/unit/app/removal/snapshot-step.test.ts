// remediate's snapshot step on fakes: a transient etcd failure is retried, then the snapshot is
// taken and the removal goes on; a store that loses the bytes at the end is a failure, never a
// snapshot; the completion carries what was taken.
import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { remediate } from '../../../../functions/app/removal/remediate.ts';
import { isLine, markerOf } from '../../../../functions/core/incident/journal.ts';
import { EtcdCallError } from '../../../../functions/ports/etcd.ts';
import { id, sample } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness, retryToRemediate } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const three = () =>
  h.setSample((at) =>
    sample(
      at,
      [0, 1, 2].map((i) => ({ i, leader: 0 })),
    ),
  );

async function approveFollower() {
  three();
  h.onMemberRemove = () =>
    h.setSample((at) =>
      sample(
        at,
        [0, 2].map((i) => ({ i, leader: 0 })),
      ),
    );
  await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
  await moveLeader(h.deps, h.lastOf('MembersProbed'));
  return h.lastOf('RemediationApproved');
}

const journalOf = async () => h.deps.store.journal((await h.deps.store.listIncidents())[0]!.incidentId);

describe('remediate: the snapshot step', () => {
  it('a timeout on every member is retried; the next try takes it, and the completion says where, how big and its SHA-256', async () => {
    h = harness({ backoff: { baseMs: 1_000, capMs: 1_000 } });
    let tries = 0;
    h.onSnapshot = () => {
      // Both healthy members time out on the first run; the second run's first try streams.
      if (++tries <= 2) throw new EtcdCallError({ kind: 'timeout', message: 'deadline exceeded' });
    };

    expect(await remediate(h.deps, await approveFollower())).toMatchObject({ kind: 'retry', reason: 'SNAPSHOT_FAILED' });
    expect(h.lastOf('RetryRequested').message).toMatch(
      /etcd-0 \(.*\) over direct .* said "deadline exceeded"; etcd-2 .* said "deadline exceeded"; nothing was removed, and etcd's failure passes by itself, so we try again at .* \(retry 1 of 2\)\./,
    );
    expect(h.calls.memberRemove).toEqual([]);

    expect(await retryToRemediate(h)).toBe('completed');
    expect(h.calls.memberRemove).toEqual([id(1)]);
    const journal = await journalOf();
    expect(journal.flatMap((e) => (isLine(e, 'snapshot-failed') ? [e.detail] : []))).toEqual([
      { problem: expect.stringContaining('deadline exceeded'), required: true, transient: true },
    ]);
    const taken = markerOf(journal, 'snapshot-taken')!.detail;
    expect(taken).toMatchObject({
      location: expect.stringMatching(/^memory:/),
      bytes: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      tookMs: 0,
    });
    expect(h.lastOf('RemediationCompleted').snapshot).toEqual(taken);
  });

  it('a store that fails to keep the snapshot blocks it: the removal waits for a person, nothing removed', async () => {
    h = harness();
    const store = h.deps.snapshots!;
    h.deps.snapshots = {
      describe: 'bucket b',
      open: async (subject) => ({
        ...(await store.open(subject)),
        keep: () => Promise.reject(new Error('InvalidPart: One or more of the specified parts could not be found')),
      }),
    };
    expect(await remediate(h.deps, await approveFollower())).toMatchObject({ kind: 'block', reason: 'SNAPSHOT_FAILED' });
    expect(h.lastOf('RemediationBlocked').message).toMatch(
      /the snapshot store bucket b refused it: InvalidPart: .*; nothing was removed; blocked\. Fix the store/,
    );
    expect(h.calls.memberRemove).toEqual([]);
  });
});
