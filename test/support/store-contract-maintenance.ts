// The store contract, maintenance: one record per cluster, written whole under a version as
// hygiene's is, so of two deliveries that read one version exactly one claims the step; kept apart
// from the cluster's hygiene record.
import { beforeEach, describe, expect, it } from 'vitest';
import { emptyMaintenanceRecord, type MaintenanceRecord } from '../../functions/core/maintenance/index.ts';
import { MaintenanceConflictError, type IncidentStore } from '../../functions/ports/incident-store.ts';
import { tinyHygieneRecord } from './hygiene-record-sample.ts';
import { RACERS, type ContractContext } from './store-contract.ts';

/** A record with a run in flight, a claim and a step journaled: every field a store must keep. */
const recordOf = (n: number): MaintenanceRecord => ({
  defragmentedAt: { '91bc3c398fb3c146': 1_717_243_200_000 + n },
  revisions: [
    { at: 1_717_243_000_000, revision: 4_100 + n },
    { at: 1_717_243_060_000, revision: 4_180 + n },
  ],
  run: {
    runId: `maintenance-c1-${n}`,
    startedAt: 1_717_243_100_000,
    reason: 'MAINTENANCE_NOSPACE',
    askedBy: 'incident:3f2c1d9e',
    done: [{ key: 'defragment:91bc3c398fb3c146', at: 1_717_243_150_000, tookMs: 2_100, outcome: 'done', message: 'etcd-1 is defragmented.' }],
    claim: { key: 'defragment:8e9e05c52164694d', owner: `maintenance:run:${n}`, until: 1_717_243_900_000 },
  },
});

export function maintenanceCases(current: () => ContractContext): void {
  let store: IncidentStore;
  let handles: ContractContext['handles'];
  let another: ContractContext['another'];
  beforeEach(() => {
    ({ store, handles, another } = current());
  });

  describe('maintenance record of a cluster', () => {
    it('is absent until written; reads back exactly, on another handle too; each write at the version read makes the next, a stale one changes nothing', async () => {
      expect(await store.maintenanceRecord('c1')).toBeUndefined();
      expect(await store.saveMaintenanceRecord('c1', recordOf(1), 0)).toBe(1);
      expect(await (await another()).maintenanceRecord('c1')).toEqual({ record: recordOf(1), version: 1 });
      expect(await store.saveMaintenanceRecord('c1', emptyMaintenanceRecord(), 1)).toBe(2);
      await expect(store.saveMaintenanceRecord('c1', recordOf(3), 1)).rejects.toMatchObject({
        name: 'MaintenanceConflictError',
        clusterId: 'c1',
        expectedVersion: 1,
      });
      await expect(store.saveMaintenanceRecord('c1', recordOf(4), 0)).rejects.toBeInstanceOf(MaintenanceConflictError);
      expect(await store.maintenanceRecord('c1')).toEqual({ record: emptyMaintenanceRecord(), version: 2 });
    });

    it("is apart from the cluster's hygiene record and from another cluster's", async () => {
      await store.saveHygieneRecord('c1', tinyHygieneRecord(1), 0);
      expect(await store.maintenanceRecord('c1')).toBeUndefined();
      expect(await store.saveMaintenanceRecord('c1', recordOf(1), 0)).toBe(1);
      expect(await store.saveMaintenanceRecord('c2', recordOf(2), 0)).toBe(1);
      expect(await store.hygieneRecord('c1')).toEqual({ record: tinyHygieneRecord(1), version: 1 });
      expect((await store.maintenanceRecord('c2'))?.record).toEqual(recordOf(2));
    });

    it(`${RACERS} claims of one step at once, on two handles: exactly one writes, the others are told of the conflict`, async () => {
      await store.saveMaintenanceRecord('c1', emptyMaintenanceRecord(), 0);
      const racers = await handles();
      const results = await Promise.allSettled(racers.map((s, i) => s.saveMaintenanceRecord('c1', recordOf(i), 1)));
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(won).toHaveLength(1);
      for (const r of results.filter((x) => x.status === 'rejected')) expect(r.reason).toBeInstanceOf(MaintenanceConflictError);
      expect(await store.maintenanceRecord('c1')).toEqual({ record: recordOf(won[0]!), version: 2 });
    });
  });
}
