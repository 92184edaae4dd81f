// The storm guard's rule, edge by edge: the threshold (share and minClusters), the window's edges,
// the cooldown's edges, a storm ended by hand, and runs that join into one storm.
import { describe, expect, it } from 'vitest';
import { stormOf, stormThreshold, type ClusterOpened } from '../../../../functions/core/fleet/fleet-storm.ts';
import { policy } from '../fixtures.ts';

const MIN = 60_000;
const fleet = (over: Partial<ReturnType<typeof policy>['fleet']> = {}) => ({ ...policy().fleet, stormWindowMs: 10 * MIN, stormCooldownMs: 10 * MIN, ...over });
const opened = (...at: number[]): ClusterOpened[] => at.map((t, i) => ({ clusterId: `c${i}`, openedAt: t }));

describe('stormThreshold', () => {
  it.each([
    // registered, share, minClusters, threshold (a count above it is a storm)
    [10, 0.2, 2, 2],
    [5, 0.2, 2, 1],
    [1, 0.2, 2, 1],
    [0, 0.2, 2, 1],
    [100, 0.2, 2, 20],
    [100, 0.2, 30, 29],
    [7, 0.5, 2, 3],
    [10, 0, 1, 0],
  ])('%i registered at share %f, at least %i: over %i', (registered, stormShare, stormMinClusters, threshold) => {
    expect(stormThreshold(fleet({ stormShare, stormMinClusters }), registered)).toBe(threshold);
  });
});

describe('stormOf', () => {
  const T = 100 * MIN;
  const rows: {
    name: string;
    opened: ClusterOpened[];
    registered: number;
    now: number;
    endedByHandAt?: number;
    on: boolean;
    liftsAt?: number;
    since?: number;
    count?: number;
  }[] = [
    { name: 'share exactly at the threshold is no storm', opened: opened(T - 3, T - 2, T - 1), registered: 15, now: T, on: false },
    {
      name: 'one cluster over the share is a storm',
      opened: opened(T - 3, T - 2, T - 1, T),
      registered: 15,
      now: T,
      on: true,
      since: T,
      count: 4,
      liftsAt: T - 3 + 20 * MIN,
    },
    { name: 'minClusters holds in a small fleet: one failing cluster of two is no storm', opened: opened(T), registered: 2, now: T, on: false },
    { name: 'two failing clusters of two are a storm', opened: opened(T - 1, T), registered: 2, now: T, on: true },
    { name: 'openings a window apart are not one storm', opened: opened(T - 10 * MIN, T), registered: 2, now: T, on: false },
    {
      name: 'openings just inside one window are',
      opened: opened(T - 10 * MIN + 1, T),
      registered: 2,
      now: T,
      on: true,
      since: T,
      liftsAt: T + 1 + 20 * MIN - 10 * MIN,
    },
    {
      name: 'the cooldown holds it on after the count fell',
      opened: opened(T, T + 1),
      registered: 2,
      now: T + 10 * MIN + 5 * MIN,
      on: true,
      count: 0,
      liftsAt: T + 20 * MIN,
    },
    { name: 'a moment before the cooldown ends it is on', opened: opened(T, T + 1), registered: 2, now: T + 20 * MIN - 1, on: true },
    { name: 'at the cooldown’s end it lifts', opened: opened(T, T + 1), registered: 2, now: T + 20 * MIN, on: false },
    { name: 'a cooldown of 0 lifts as the count falls', opened: opened(T, T + 1), registered: 2, now: T + 10 * MIN, on: false },
    { name: 'ended by hand: earlier openings no longer count', opened: opened(T, T + 1), registered: 2, now: T + 2, endedByHandAt: T + 1, on: false },
    {
      name: 'ended by hand, then two more clusters fail: a new storm',
      opened: opened(T, T + 1, T + 5, T + 6),
      registered: 2,
      now: T + 6,
      endedByHandAt: T + 1,
      on: true,
      since: T + 6,
      count: 2,
    },
    { name: 'openings in the future are not counted', opened: opened(T, T + 1), registered: 2, now: T, on: false },
  ];
  it.each(rows)('$name', (row) => {
    const cooldown = row.name.includes('cooldown of 0') ? 0 : 10 * MIN;
    const storm = stormOf(
      { opened: row.opened, registeredClusters: row.registered, now: row.now, ...(row.endedByHandAt ? { endedByHandAt: row.endedByHandAt } : {}) },
      fleet({ stormCooldownMs: cooldown }),
    );
    expect(storm !== undefined).toBe(row.on);
    if (row.liftsAt !== undefined) expect(storm?.liftsAt).toBe(row.liftsAt);
    if (row.since !== undefined) expect(storm?.since).toBe(row.since);
    if (row.count !== undefined) expect(storm?.count).toBe(row.count);
  });

  it('joins runs whose cooldowns touch into one storm, since the first, naming every cluster', () => {
    // Two clusters at T, two more 15 min later: the first run ends at T+10, its cooldown at T+20.
    const storm = stormOf({ opened: opened(T, T + 1, T + 15 * MIN, T + 15 * MIN + 1), registeredClusters: 2, now: T + 16 * MIN }, fleet());
    expect(storm).toMatchObject({ since: T + 1, count: 2, liftsAt: T + 15 * MIN + 20 * MIN });
    expect(storm?.clusters).toEqual(['c3', 'c2', 'c1', 'c0']);
  });

  // How long it takes at scale is bench:fleet's to measure; here, that the answer is right at 500.
  it('at 500 clusters every opening in the window counts, newest first', () => {
    const many = Array.from({ length: 500 }, (_, i) => ({ clusterId: `c${i}`, openedAt: T - i * 1_000 }));
    const storm = stormOf({ opened: many, registeredClusters: 500, now: T }, fleet());
    expect(storm?.count).toBe(500);
    expect(storm?.clusters.slice(0, 3)).toEqual(['c0', 'c1', 'c2']);
    expect(storm?.clusters).toHaveLength(500);
    expect(storm?.registered).toBe(500);
  });
});
