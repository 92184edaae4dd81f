// The store contract, recent incidents: what one report reads (listIncidents' openOrChangedSince)
// is the cluster's open incidents and those written since, never the ones that ended before.
import { beforeEach, describe, expect, it } from 'vitest';
import { targetKeyOf } from '../../functions/core/view/target.ts';
import type { Incident, IncidentStore } from '../../functions/ports/incident-store.ts';
import type { ContractContext } from './store-contract.ts';

export function recentCases(current: () => ContractContext): void {
  let store: IncidentStore;
  let incident: Incident;
  let another: ContractContext['another'];
  beforeEach(() => {
    ({ store, incident, another } = current());
  });

  /** An incident of `memberName` opened at `openedAt` and blocked at `endedAt`. */
  const ended = async (clusterId: string, memberName: string, openedAt: number, endedAt: number): Promise<Incident> => {
    const target = { memberName };
    const { incident: opened } = await store.openOrJoin({ clusterId, targetKey: targetKeyOf(target), target, reason: 'r', now: openedAt });
    return store.closeIncident(opened.incidentId, { outcome: 'blocked', result: null, now: endedAt });
  };
  const ids = (incidents: Incident[]): string[] => incidents.map((i) => i.incidentId);

  describe('recent incidents of a cluster', () => {
    it('are its open ones, however old, and those written since; not those that ended before, nor other clusters', async () => {
      await ended('c1', 'etcd-1', 2_000, 3_000);
      const recent = await ended('c1', 'etcd-2', 4_000, 9_000);
      await ended('c2', 'etcd-2', 4_000, 9_000);
      for (const handle of [store, await another()]) {
        expect(ids(await handle.listIncidents({ clusterId: 'c1', openOrChangedSince: 5_000 }))).toEqual([incident.incidentId, recent.incidentId]);
        expect(ids(await handle.listIncidents({ clusterId: 'c1', openOrChangedSince: 9_000 }))).toEqual([incident.incidentId, recent.incidentId]);
        expect(ids(await handle.listIncidents({ clusterId: 'c1', openOrChangedSince: 9_001 }))).toEqual([incident.incidentId]);
        expect(ids(await handle.listIncidents({ clusterId: 'c1', state: 'blocked', openOrChangedSince: 5_000 }))).toEqual([recent.incidentId]);
      }
    });

    it('an ended incident written again (its outbox said) counts from that write', async () => {
      const old = await ended('c1', 'etcd-1', 2_000, 3_000);
      await store.updateIncident(old.incidentId, { outbox: [] }, { expectVersion: old.version, now: 8_000 });
      expect(ids(await store.listIncidents({ clusterId: 'c1', openOrChangedSince: 5_000 }))).toEqual([incident.incidentId, old.incidentId]);
    });
  });
}
