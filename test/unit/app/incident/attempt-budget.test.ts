// How waits and attempts are counted, over the whole chain: retries that only wait (evidence,
// the grace window, an election) spend no attempt and are bounded by the incident deadline;
// retries of a failed action spend one each and are bounded by maxAttempts.
import { afterEach, describe, expect, it } from 'vitest';
import { EtcdCallError } from '../../../../functions/ports/etcd.ts';
import { sample } from '../../core/fixtures.ts';
import { atLeastOnceDriver } from '../at-least-once.ts';
import { harness, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

async function runToEnd(memberName: string) {
  const driver = atLeastOnceDriver(h.clock);
  const deps = { ...h.deps, bus: driver.bus, scheduler: driver.scheduler };
  await driver.bus.publish({ source: 'etcd-remediator', detailType: 'MemberUnhealthy', detail: unhealthy(memberName) });
  expect((await driver.run(deps, 2_000)).idle).toBe(true);
  const [incident] = await h.deps.store.listIncidents();
  const retries = driver.log.published.filter((e) => e.detailType === 'RetryRequested').map((e) => (e.detail as { reason: string }).reason);
  return { incident: incident!, retries, driver };
}

describe('the attempt budget and the incident deadline', () => {
  it('waiting on an unreachable leader spends no attempt: past maxAttempts, only the deadline ends it', async () => {
    h = harness({ maxAttempts: 3, graceMs: 3_600_000, incidentDeadlineMs: 120_000, backoff: { baseMs: 5_000, capMs: 5_000 } });
    // The leader's path is cut; both followers keep naming it at one term.
    h.setSample((at) =>
      sample(at, [
        { i: 0, leader: 0, paths: 'refused' },
        { i: 1, leader: 0 },
        { i: 2, leader: 0 },
      ]),
    );

    const { incident, retries } = await runToEnd('etcd-0');

    expect(incident.state).toBe('blocked');
    expect((incident.result as { reason: string }).reason).toBe('INCIDENT_DEADLINE_EXCEEDED');
    expect(retries.length).toBeGreaterThan(3);
    expect(new Set(retries)).toEqual(new Set(['LEADER_UNREACHABLE_UNCONFIRMED', 'LEADER_UNREACHABLE']));
    // Every retry was a wait.
    expect(incident.waits).toBe(incident.attempt);
    expect(h.calls.memberRemove).toEqual([]);
  });

  it('a removal etcd keeps refusing spends an attempt per retry, and the budget ends it', async () => {
    h = harness({ maxAttempts: 3, backoff: { baseMs: 1_000, capMs: 1_000 } });
    h.setSample((at) =>
      sample(
        at,
        [0, 1, 2].map((i) => ({ i, leader: 0 })),
      ),
    );
    h.onMemberRemove = () => {
      throw new EtcdCallError({ kind: 'other', grpcCode: 2, message: 'etcdserver: unhealthy cluster' });
    };

    const { incident, retries } = await runToEnd('etcd-1');

    expect(incident.state).toBe('blocked');
    expect((incident.result as { reason: string }).reason).toBe('ATTEMPTS_EXHAUSTED');
    expect(retries).toEqual(['ETCD_TRANSIENT', 'ETCD_TRANSIENT', 'ETCD_TRANSIENT']);
    expect(incident.attempt - incident.waits).toBe(3);
    // etcd's "unhealthy cluster" holds for every member: one MemberRemove per attempt.
    expect(h.calls.memberRemove).toHaveLength(3);
  });
});
