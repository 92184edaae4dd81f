// The store contract, leader hygiene: one record per cluster, written whole under a version, so
// of writers that read the same version exactly one writes.
import { beforeEach, describe, expect, it } from 'vitest';
import { HygieneConflictError, type IncidentStore } from '../../functions/ports/incident-store.ts';
import { realisticHygieneRecord, tinyHygieneRecord } from './hygiene-record-sample.ts';
import { RACERS, type ContractContext } from './store-contract.ts';

export function hygieneCases(current: () => ContractContext): void {
  let store: IncidentStore;
  let handles: ContractContext['handles'];
  let another: ContractContext['another'];
  beforeEach(() => {
    ({ store, handles, another } = current());
  });

  describe('leader-hygiene record of a cluster', () => {
    it('is absent until written; the first write, expecting 0, makes version 1 and reads back exactly, on another handle too', async () => {
      expect(await store.hygieneRecord('c1')).toBeUndefined();
      const record = tinyHygieneRecord();
      expect(record.samples['91bc3c398fb3c146']).toEqual([]);
      expect(record.samples['8e9e05c52164694d']![0]!.walFsyncP99).toBe(0.0123);
      expect(await store.saveHygieneRecord('c1', record, 0)).toBe(1);
      expect(await store.hygieneRecord('c1')).toEqual({ record, version: 1 });
      expect(await (await another()).hygieneRecord('c1')).toEqual({ record: tinyHygieneRecord(), version: 1 });
    });

    it("keeps a histogram's +Inf bound, empty maps and a cluster's whole record as written", async () => {
      const record = realisticHygieneRecord();
      record.lastScrapes['8e9e05c52164694d'] = { ...record.lastScrapes['8e9e05c52164694d']!, peerRoundTrip: {} };
      await store.saveHygieneRecord('c1', record, 0);
      const stored = (await store.hygieneRecord('c1'))!.record;
      expect(stored).toEqual(record);
      expect(stored.lastScrapes['91bc3c398fb3c146']!.walFsync.buckets.at(-1)![0]).toBe(Infinity);
      expect(stored.lastScrapes['8e9e05c52164694d']!.peerRoundTrip).toEqual({});
      expect(Object.keys(stored.samples)).toEqual(Object.keys(record.samples));
    });

    it('each write at the version read makes the next; a stale or a first write over a record is refused and changes nothing', async () => {
      expect(await store.saveHygieneRecord('c1', tinyHygieneRecord(1), 0)).toBe(1);
      expect(await store.saveHygieneRecord('c1', tinyHygieneRecord(2), 1)).toBe(2);
      const stale = store.saveHygieneRecord('c1', tinyHygieneRecord(3), 1);
      await expect(stale).rejects.toBeInstanceOf(HygieneConflictError);
      await expect(stale).rejects.toMatchObject({ clusterId: 'c1', expectedVersion: 1 });
      await expect(store.saveHygieneRecord('c1', tinyHygieneRecord(4), 0)).rejects.toBeInstanceOf(HygieneConflictError);
      await expect(store.saveHygieneRecord('c1', tinyHygieneRecord(5), 3)).rejects.toBeInstanceOf(HygieneConflictError);
      expect(await store.hygieneRecord('c1')).toEqual({ record: tinyHygieneRecord(2), version: 2 });
    });

    it('a version expected of a cluster with no record is a conflict, and writes nothing', async () => {
      await expect(store.saveHygieneRecord('c1', tinyHygieneRecord(), 1)).rejects.toBeInstanceOf(HygieneConflictError);
      expect(await store.hygieneRecord('c1')).toBeUndefined();
    });

    it('refuses an expected version that is not a whole number ≥ 0, naming it', async () => {
      await expect(store.saveHygieneRecord('c1', tinyHygieneRecord(), -1)).rejects.toThrow(/expectVersion/);
      await expect(store.saveHygieneRecord('c1', tinyHygieneRecord(), 1.5)).rejects.toThrow(/expectVersion/);
      expect(await store.hygieneRecord('c1')).toBeUndefined();
    });

    it('records of two clusters are apart', async () => {
      await store.saveHygieneRecord('c1', tinyHygieneRecord(1), 0);
      expect(await store.saveHygieneRecord('c2', tinyHygieneRecord(2), 0)).toBe(1);
      expect(await store.saveHygieneRecord('c2', tinyHygieneRecord(3), 1)).toBe(2);
      expect(await store.hygieneRecord('c1')).toEqual({ record: tinyHygieneRecord(1), version: 1 });
      expect(await store.hygieneRecord('c2')).toEqual({ record: tinyHygieneRecord(3), version: 2 });
    });

    for (const [what, read] of [
      ['the first write', 0],
      ['a write at version 1', 1],
    ] as const) {
      it(`${RACERS} writers of ${what} at once, on two handles: exactly one writes, the others are told of the conflict`, async () => {
        if (read > 0) await store.saveHygieneRecord('c1', tinyHygieneRecord(100), 0);
        const racers = await handles();
        const results = await Promise.allSettled(racers.map((s, i) => s.saveHygieneRecord('c1', tinyHygieneRecord(i), read)));
        const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
        expect(won).toHaveLength(1);
        expect(results[won[0]!]).toEqual({ status: 'fulfilled', value: read + 1 });
        for (const r of results.filter((x) => x.status === 'rejected')) expect(r.reason).toBeInstanceOf(HygieneConflictError);
        expect(await store.hygieneRecord('c1')).toEqual({ record: tinyHygieneRecord(won[0]), version: read + 1 });
      });
    }
  });
}
