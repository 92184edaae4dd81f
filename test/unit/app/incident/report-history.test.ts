// A report's cost does not grow with its cluster's history: probe-members matches a report
// against the cluster's open incidents and those that ended within minHealthyPeriod, so a cluster
// with a thousand past incidents is not read whole for each MemberUnhealthy.
import { afterEach, describe, expect, it } from 'vitest';
import { probeMembers } from '../../../support/probe-members.ts';
import { endingStates, incidentEndings } from '../../../../functions/core/incident/incident-endings.ts';
import { targetKeyOf } from '../../../../functions/core/view/target.ts';
import type { IncidentStore } from '../../../../functions/ports/incident-store.ts';
import { sample } from '../../core/fixtures.ts';
import { harness, T0, unhealthy, type Harness } from '../harness.ts';

const HISTORY = 1_000;
/** The state a removal ends in (its machine asked for), as the endings table names it. */
const REMOVED = endingStates.find((s) => incidentEndings[s].detailType === 'RemediationCompleted')!;
const HOUR = 3_600_000;

let h: Harness;
afterEach(async () => h?.close());

/** Past incidents of c1, each opened and closed `hoursAgo` before T0 (well outside the window). */
async function pastIncidents(store: IncidentStore, count: number, hoursAgo: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const target = { memberName: `old-${i}` };
    const at = T0 - hoursAgo * HOUR + i;
    const { incident } = await store.openOrJoin({ clusterId: 'c1', targetKey: targetKeyOf(target), target, reason: 'past', now: at });
    await store.closeIncident(incident.incidentId, { outcome: 'blocked', result: null, now: at + 1 });
  }
}

/** Counts the incidents the store hands back to listIncidents: what a step reads. */
function countingReads(store: IncidentStore): { store: IncidentStore; read: () => number } {
  let read = 0;
  const counted = new Proxy(store, {
    get(target, key) {
      if (key === 'listIncidents') {
        return async (...args: Parameters<IncidentStore['listIncidents']>) => {
          const found = await target.listIncidents(...args);
          read += found.length;
          return found;
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: counted, read: () => read };
}

describe('probe-members reads a bounded slice of the cluster history per report', () => {
  it('a cluster with 1,000 incidents that ended days ago reads none of them to match a new report', async () => {
    h = harness({ minHealthyPeriodMs: HOUR });
    await pastIncidents(h.deps.store, HISTORY, 48);
    const { store, read } = countingReads(h.deps.store);
    h.deps.store = store;
    h.setSample((at) =>
      sample(
        at,
        [0, 1, 2].map((i) => ({ i, leader: 0 })),
      ),
    );
    const outcome = await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    expect(outcome.kind).toBe('probed');
    // The new incident itself (the twin check reads the open ones): never the history.
    expect(read()).toBeLessThanOrEqual(2);
  });

  it('still finds an incident of the same member that ended inside the window: a late report is kept there', async () => {
    h = harness({ minHealthyPeriodMs: HOUR });
    await pastIncidents(h.deps.store, 50, 48);
    const target = { memberName: 'etcd-1' };
    const { incident } = await h.deps.store.openOrJoin({ clusterId: 'c1', targetKey: targetKeyOf(target), target, reason: 'first', now: T0 - 20 * 60_000 });
    await h.deps.store.closeIncident(incident.incidentId, { outcome: REMOVED, result: null, now: T0 - 10 * 60_000 });
    const report = { ...unhealthy('etcd-1'), observedAt: new Date(T0 - 15 * 60_000).toISOString() };
    expect(await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: report })).toEqual({ kind: 'late-duplicate', incidentId: incident.incidentId });
  });
});
