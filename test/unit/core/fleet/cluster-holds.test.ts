// The holds kept in a cluster's etcd, joined with the store's facts: a pause in either holds, the
// store's own words first; a storm hold another store wrote defers a removal until it lifts or a
// person ends the storm; a stored value that is not one of ours still holds.
import { describe, expect, it } from 'vitest';
import { holdKindOf, holdOf, liveStormHold, sameStorm, stormHoldOf, withClusterHolds, type StormHold } from '../../../../functions/core/fleet/cluster-holds.ts';
import type { FleetFacts } from '../../../../functions/core/fleet/fleet-gate.ts';
import { plan, type PlanInput } from '../../../../functions/core/plan/plan.ts';
import { cluster, fixedRandom, id, policy } from '../fixtures.ts';

const MIN = 60_000;
const T0 = 100 * MIN;
const mark = (why: string, where?: string) => ({ by: 'ops@box', at: T0 - MIN, why, ...(where ? { where } : {}) });
const noFacts: FleetFacts = { pauses: {}, opened: [], registeredClusters: 1 };
const storm: StormHold = {
  ...mark('storm', 'state file /srv/run.sqlite on mgmt'),
  count: 4,
  threshold: 2,
  registered: 10,
  clusters: ['a', 'b', 'c', 'd'],
  since: T0 - 2 * MIN,
  underFrom: T0 + 5 * MIN,
  liftsAt: T0 + 15 * MIN,
};

const follower = cluster(T0, 3, { leader: 1 });

const decide = (facts: FleetFacts) =>
  plan({
    samples: [follower],
    targetId: id(0),
    incident: { openedAt: T0 - MIN, attempt: 0, immediateReprobes: 0 },
    remediation: { retryCount: 0 },
    policy: policy({ electionTimeoutMs: 1_000, graceMs: 10 * MIN }),
    now: T0,
    random: fixedRandom(0.5),
    fleet: { clusterId: 'c1', facts },
  } satisfies PlanInput);

describe('holds from etcd joined with the store', () => {
  const rows: { name: string; facts: FleetFacts; reason: string; says?: RegExp }[] = [
    { name: 'no hold anywhere: approved', facts: withClusterHolds(noFacts, 'c1', {}), reason: 'TARGET_IS_FOLLOWER' },
    {
      name: 'a pause of the cluster in its etcd holds, saying where it is kept',
      facts: withClusterHolds(noFacts, 'c1', { pause: { ...mark('upgrade', 'state file /a.sqlite on box'), key: '/etcd-remediator/holds/pause' } }),
      reason: 'PAUSED',
      says: /cluster c1 is paused \(kept in etcd key \/etcd-remediator\/holds\/pause, written from state file \/a.sqlite on box\) by ops@box .*"upgrade"/,
    },
    {
      name: 'a fleet pause written into its etcd holds',
      facts: withClusterHolds(noFacts, 'c1', { fleetPause: mark('zone b') }),
      reason: 'PAUSED',
      says: /paused fleet-wide/,
    },
    {
      name: 'the store’s own pause is the one said',
      facts: withClusterHolds({ ...noFacts, pauses: { clusters: { c1: mark('store words') } } }, 'c1', { pause: mark('etcd words') }),
      reason: 'PAUSED',
      says: /store words/,
    },
    {
      name: 'a storm hold another store wrote defers the removal, saying where it is held',
      facts: withClusterHolds(noFacts, 'c1', { storm }),
      reason: 'FLEET_STORM',
      says: /\(state file \/srv\/run.sqlite on mgmt\).*4 of 10 registered/,
    },
    {
      name: 'a storm hold past its lift holds nothing',
      facts: withClusterHolds(noFacts, 'c1', { storm: { ...storm, liftsAt: T0 } }),
      reason: 'TARGET_IS_FOLLOWER',
    },
    {
      name: 'a storm hold ended by hand since it was written holds nothing',
      facts: withClusterHolds({ ...noFacts, pauses: { stormEnded: { by: 'sre', at: T0 - 30_000, why: 'real' } } }, 'c1', { storm }),
      reason: 'TARGET_IS_FOLLOWER',
    },
    {
      name: 'a storm ended by hand before the hold was written does not end it',
      facts: withClusterHolds({ ...noFacts, pauses: { stormEnded: { by: 'sre', at: T0 - 2 * MIN, why: 'earlier' } } }, 'c1', { storm }),
      reason: 'FLEET_STORM',
    },
  ];
  it.each(rows)('$name', ({ facts, reason, says }) => {
    const d = decide(facts);
    expect(d.reason).toBe(reason);
    if (says) expect(d.message).toMatch(says);
  });

  it('a value that is not a hold of ours still holds, said as unreadable; a storm so read never lifts by itself', () => {
    for (const raw of ['not json', '{"by":1}', '{}', 'null']) {
      expect(holdOf('pause', '/p/holds/pause', raw)).toMatchObject({
        by: 'unknown',
        why: expect.stringMatching(/^the hold at etcd key \/p\/holds\/pause cannot be read/),
      });
      const read = holdOf('storm', '/p/holds/storm', raw) as StormHold;
      expect(liveStormHold({ pauses: {}, stormHold: read }, Number.MAX_SAFE_INTEGER - 1)).toBe(read);
    }
    expect(holdOf('storm', 'k', JSON.stringify(storm))).toEqual({ ...storm, key: 'k' });
    // The key is the reader's to add: a value that carries one is not a hold of ours.
    expect(holdOf('pause', 'k', JSON.stringify({ ...mark('x'), key: 'elsewhere' }))).toMatchObject({ by: 'unknown', key: 'k' });
  });

  it('names only its own keys', () => {
    expect(holdKindOf('/p', '/p/holds/pause')).toBe('pause');
    expect(holdKindOf('/p', '/p/holds/fleet-pause')).toBe('fleet-pause');
    expect(holdKindOf('/p', '/p/holds/storm')).toBe('storm');
    expect(holdKindOf('/p', '/p/holds/pause/x')).toBeUndefined();
    expect(holdKindOf('/p', '/q/holds/pause')).toBeUndefined();
  });

  it('a storm is rewritten only when it says more', () => {
    const written = stormHoldOf(storm, 'state file x', T0);
    expect(sameStorm(written, storm)).toBe(true);
    expect(sameStorm(written, { ...storm, count: 5 })).toBe(false);
    expect(sameStorm(written, { ...storm, liftsAt: storm.liftsAt + 1 })).toBe(false);
    expect(sameStorm(undefined, storm)).toBe(false);
  });
});
