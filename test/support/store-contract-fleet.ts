// The store contract, part three: the fleet's records (pauses, each cluster's newest opening, the
// removal slots), the same on every backend, the slots raced on two handles.
import { beforeEach, describe, expect, it } from 'vitest';
import type { IncidentStore } from '../../functions/ports/incident-store.ts';
import { RACERS, type ContractContext } from './store-contract.ts';

export function fleetCases(current: () => ContractContext): void {
  let store: IncidentStore;
  let handles: ContractContext['handles'];
  let another: ContractContext['another'];
  beforeEach(() => {
    ({ store, handles, another } = current());
  });
  const mark = (by: string, at: number) => ({ by, at, why: `why ${by}` });

  describe('fleet pauses', () => {
    it('pauses the fleet and single clusters, seen by another handle, and lifts each', async () => {
      expect(await store.fleetPauses()).toEqual({});
      expect(await store.setPause(undefined, mark('ops', 10))).toBe(true);
      expect(await store.setPause('c1', mark('dev', 20))).toBe(true);
      await store.endStorm(mark('sre', 30));
      const other = await another();
      expect(await other.fleetPauses()).toEqual({ fleet: mark('ops', 10), clusters: { c1: mark('dev', 20) }, stormEnded: mark('sre', 30) });
      // Pausing again says who paused last.
      await other.setPause('c1', mark('lead', 40));
      expect((await store.fleetPauses()).clusters).toEqual({ c1: mark('lead', 40) });
      expect(await store.setPause('c1', null)).toBe(true);
      expect(await store.setPause('c1', null)).toBe(false);
      expect(await store.setPause(undefined, null)).toBe(true);
      expect(await store.fleetPauses()).toEqual({ stormEnded: mark('sre', 30) });
    });
  });

  describe('fleet openings', () => {
    it('keeps each cluster’s newest opening, and lists those after a time, newest first', async () => {
      await store.noteOpened('a', 100);
      await store.noteOpened('b', 300);
      await store.noteOpened('a', 200);
      // An older or repeated opening changes nothing.
      await store.noteOpened('b', 150);
      await store.noteOpened('b', 300);
      expect(await store.openedSince(0)).toEqual([
        { clusterId: 'b', openedAt: 300 },
        { clusterId: 'a', openedAt: 200 },
      ]);
      expect(await store.openedSince(200)).toEqual([{ clusterId: 'b', openedAt: 300 }]);
    });
  });

  describe('removal slots', () => {
    const take = (s: IncidentStore, owner: string, now = 1_000, max = 2) =>
      s.takeRemovalSlot({ owner, clusterId: `cluster-of-${owner}`, max, leaseMs: 500, now });

    it('gives at most max slots, renews an owner’s own, frees a released or expired one', async () => {
      expect(await take(store, 'i1')).toEqual({ taken: true, slot: 0 });
      expect(await take(store, 'i2')).toEqual({ taken: true, slot: 1 });
      expect(await take(store, 'i1', 1_100)).toEqual({ taken: true, slot: 0 });
      const refused = await take(store, 'i3', 1_200);
      expect(refused).toEqual({
        taken: false,
        holders: [
          { slot: 0, owner: 'i1', clusterId: 'cluster-of-i1', until: 1_600 },
          { slot: 1, owner: 'i2', clusterId: 'cluster-of-i2', until: 1_500 },
        ],
      });
      // i2's lease ends at 1 500: a holder that died frees its slot.
      expect(await take(store, 'i3', 1_500)).toEqual({ taken: true, slot: 1 });
      expect(await store.releaseRemovalSlot('i1')).toBe(true);
      expect(await store.releaseRemovalSlot('i1')).toBe(false);
      expect(await store.removalSlots(1_500)).toEqual([{ slot: 1, owner: 'i3', clusterId: 'cluster-of-i3', until: 2_000 }]);
      // A smaller cap counts only its own slots.
      expect(await take(store, 'i4', 1_500, 1)).toEqual({ taken: true, slot: 0 });
      expect(await take(store, 'i5', 1_500, 1)).toMatchObject({ taken: false });
    });

    it(`${RACERS} owners race for 3 slots on two handles: exactly 3 take one, each a different slot`, async () => {
      const racers = await handles();
      const results = await Promise.all(racers.map((s, i) => s.takeRemovalSlot({ owner: `r${i}`, clusterId: `c${i}`, max: 3, leaseMs: 60_000, now: 1_000 })));
      const slots = results.flatMap((r) => (r.taken ? [r.slot] : []));
      expect(slots.sort()).toEqual([0, 1, 2]);
      expect(await store.removalSlots(1_000)).toHaveLength(3);
    });
  });
}
