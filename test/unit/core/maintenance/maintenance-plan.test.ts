// Maintenance as policy, pure: what calls for it (NOSPACE, free pages, the quota near), whether it
// may run now (one member stalled by its defragmentation counts as down, with every unhealthy or
// disrupted member), and its steps one member at a time, the leader last after a move off it.
import { describe, expect, it } from 'vitest';
import {
  MAINTENANCE_DEFAULTS,
  maintenancePlan,
  maintenanceTriggers,
  type MaintenanceInput,
  type MaintenanceRules,
} from '../../../../functions/core/maintenance/index.ts';
import type { ClusterView } from '../../../../functions/core/view/index.ts';
import { cluster, id } from '../fixtures.ts';

const MiB = 1024 * 1024;
const ON: MaintenanceRules = { ...MAINTENANCE_DEFAULTS, enabled: true };

/** Each member's database: [dbSize, dbSizeInUse] in MiB. */
const withDb = (v: ClusterView, dbs: Record<number, readonly [number, number]>): ClusterView => ({
  ...v,
  members: v.members.map((m, i) => {
    const db = dbs[i];
    return db && m.status ? { ...m, status: { ...m.status, dbSize: db[0] * MiB, dbSizeInUse: db[1] * MiB } } : m;
  }),
});
const input = (view: ClusterView, rest: Partial<MaintenanceInput> = {}): MaintenanceInput => ({
  view,
  rules: ON,
  lastDefragmentedAt: {},
  now: 100 * 3_600_000,
  ...rest,
});
const kinds = (p: ReturnType<typeof maintenancePlan>) =>
  p.steps.map((s) => (s.kind === 'defragment' ? `defragment ${s.member}` : s.kind === 'move-leader' ? `move-leader ${s.from}` : s.kind));

describe('what calls for maintenance', () => {
  it.each([
    ['500 of 800 MiB free (62 %): fragmented', [800, 300], ['fragmented']],
    ['150 MiB free of 200 (75 %): too small to rewrite', [200, 50], []],
    ['300 MiB free of 1,600 (19 %): too small a share', [1_600, 1_300], []],
    ['1,700 MiB of the 2 GiB quota (83 %), little free: near the quota', [1_700, 1_650], ['near-quota']],
    ['a small, dense database: nothing', [100, 95], []],
  ] as const)('%s', (_name, db, expected) => {
    const v = withDb(cluster(0, 3, { leader: 0 }), { 1: db });
    expect(maintenanceTriggers(v.members, ON).map((t) => t.kind)).toEqual(expected);
  });

  it('NOSPACE once for the cluster, naming who raised it; a member that sent no dbSizeInUse is never taken for all free', () => {
    const v = cluster(0, 3, { leader: 0, override: { 0: { alarms: ['NOSPACE'] }, 2: { alarms: ['NOSPACE'] } } });
    expect(maintenanceTriggers(v.members, ON)).toEqual([{ kind: 'nospace', raisedBy: [id(0), id(2)] }]);
    const noInUse = { ...v, members: v.members.map((m) => (m.status ? { ...m, status: { ...m.status, dbSize: 900 * MiB, alarms: [] } } : m)) };
    expect(maintenanceTriggers(noInUse.members, ON)).toEqual([]);
  });
});

describe('the plan', () => {
  it('NOSPACE on 5 members (the quota reached), one follower dead: compact to the safe revision, the followers one at a time, then a move off the leader and the leader, disarm, verify', () => {
    const v = cluster(0, 5, {
      leader: 2,
      override: { 0: { alarms: ['NOSPACE'] }, 1: { alarms: ['NOSPACE'] }, 2: { alarms: ['NOSPACE'] }, 3: { alarms: ['NOSPACE'] }, 4: { paths: 'refused' } },
    });
    const p = maintenancePlan(input(v, { compactTo: 1_234, rules: MAINTENANCE_DEFAULTS }));
    expect(p.reason).toBe('MAINTENANCE_NOSPACE');
    expect(kinds(p)).toEqual([
      'compact',
      `defragment ${id(0)}`,
      `defragment ${id(1)}`,
      `defragment ${id(3)}`,
      `move-leader ${id(2)}`,
      `defragment ${id(2)}`,
      'disarm',
      'verify',
    ]);
    expect(p.steps[0]).toEqual({ kind: 'compact', revision: 1_234 });
    expect(p.message).toMatch(
      /^A NOSPACE alarm raised by etcd-0 .*: compact the history to revision 1234, then defragment etcd-0 .*move leadership off etcd-2 .*, then defragment etcd-2 .*, then disarm the alarm, then check the databases shrank and writes are accepted, one member at a time\.$/,
    );
  });

  it('without a safe revision to compact to, a NOSPACE is cleared without a compaction', () => {
    const v = cluster(0, 3, { leader: 0, override: { 1: { alarms: ['NOSPACE'] } } });
    expect(kinds(maintenancePlan(input(v)))).toEqual([
      `defragment ${id(1)}`,
      `defragment ${id(2)}`,
      `move-leader ${id(0)}`,
      `defragment ${id(0)}`,
      'disarm',
      'verify',
    ]);
  });

  it('fragmentation: only the fragmented members, the leader last after a move; learners first', () => {
    const v = withDb(cluster(0, 4, { leader: 1, override: { 3: { learner: true } } }), { 1: [800, 100], 2: [800, 100], 3: [800, 100] });
    const p = maintenancePlan(input(v));
    expect(p.reason).toBe('MAINTENANCE_FRAGMENTED');
    expect(kinds(p)).toEqual([`defragment ${id(3)}`, `defragment ${id(2)}`, `move-leader ${id(1)}`, `defragment ${id(1)}`]);
  });

  it('by level: a step the run did is not planned again, and a NOSPACE run checks a write once disarmed', () => {
    const alarmed = cluster(0, 3, { leader: 0, override: { 0: { alarms: ['NOSPACE'] } } });
    const run = { reason: 'MAINTENANCE_NOSPACE' as const, done: [{ key: `defragment:${id(1)}`, at: 1, tookMs: 5, outcome: 'done' as const, message: '' }] };
    expect(kinds(maintenancePlan(input(alarmed, { run })))).toEqual([`defragment ${id(2)}`, `move-leader ${id(0)}`, `defragment ${id(0)}`, 'disarm', 'verify']);
    // etcd's figures do not say what a defragmentation would reclaim (under NOSPACE no write commits,
    // and dbSizeInUse still counts the pages a compaction freed): a member with none free is still defragmented.
    const dense = withDb(alarmed, { 1: [2, 2], 2: [2, 2] });
    expect(kinds(maintenancePlan(input(dense)))).toEqual([
      `defragment ${id(1)}`,
      `defragment ${id(2)}`,
      `move-leader ${id(0)}`,
      `defragment ${id(0)}`,
      'disarm',
      'verify',
    ]);
    // Disarmed: no alarm in the view, and the run's last step is the write that proves it.
    const all = { ...run, done: [0, 1, 2].map((i) => ({ ...run.done[0]!, key: `defragment:${id(i)}` })) };
    const disarmed = cluster(0, 3, { leader: 1 });
    expect(kinds(maintenancePlan(input(disarmed, { run: all })))).toEqual(['verify']);
    const verified = { ...all, done: [...all.done, { key: 'verify', at: 2, tookMs: 5, outcome: 'done' as const, message: '' }] };
    expect(maintenancePlan(input(disarmed, { run: verified }))).toMatchObject({ reason: 'MAINTENANCE_NOT_NEEDED', steps: [] });
    // A failed step is not done: planned again.
    const failed = { ...run, done: [{ ...run.done[0]!, outcome: 'failed' as const }] };
    expect(kinds(maintenancePlan(input(alarmed, { run: failed })))[0]).toBe(`defragment ${id(1)}`);
    // Every member defragmented and the alarm still standing: disarm, and the write decides.
    expect(kinds(maintenancePlan(input(alarmed, { run: all })))).toEqual(['disarm', 'verify']);
  });

  it('a member leadership was moved off is defragmented next, even when one look shows no trigger for it (a view taken during the transfer)', () => {
    const run = {
      reason: 'MAINTENANCE_FRAGMENTED' as const,
      done: [
        ...[1, 2].map((i) => ({ key: `defragment:${id(i)}`, at: 1, tookMs: 5, outcome: 'done' as const, message: '' })),
        { key: `move-leader:${id(0)}`, at: 2, tookMs: 5, outcome: 'done' as const, message: '' },
      ],
    };
    // etcd-1 leads now; etcd-0's figures were not read as fragmented in this look.
    const v = cluster(0, 3, { leader: 1 });
    expect(kinds(maintenancePlan(input(v, { run })))).toEqual([`defragment ${id(0)}`]);
    const after = { ...run, done: [...run.done, { key: `defragment:${id(0)}`, at: 3, tookMs: 5, outcome: 'done' as const, message: '' }] };
    expect(maintenancePlan(input(v, { run: after })).reason).toBe('MAINTENANCE_NOT_NEEDED');
  });

  it('a CORRUPT alarm: nothing is maintained, a person must look', () => {
    const v = withDb(cluster(0, 3, { leader: 0, override: { 0: { alarms: ['NOSPACE'] }, 1: { alarms: ['CORRUPT'] } } }), { 0: [2, 1] });
    const p = maintenancePlan(input(v));
    expect(p).toMatchObject({ reason: 'MAINTENANCE_CORRUPT', steps: [] });
    expect(p.message).toMatch(/CORRUPT alarm stands on etcd-1 .*data corruption guide/);
  });

  it('nothing to do: not needed', () => {
    expect(maintenancePlan(input(cluster(0, 3, { leader: 0 })))).toMatchObject({ reason: 'MAINTENANCE_NOT_NEEDED', steps: [] });
  });

  it('maintenance off: fragmentation waits, a NOSPACE is still cleared unless clearNoSpace is off too', () => {
    const fragmented = withDb(cluster(0, 3, { leader: 0 }), { 1: [800, 100] });
    expect(maintenancePlan(input(fragmented, { rules: MAINTENANCE_DEFAULTS }))).toMatchObject({ reason: 'MAINTENANCE_OFF', steps: [] });
    const alarmed = withDb(cluster(0, 3, { leader: 0, override: { 1: { alarms: ['NOSPACE'] } } }), { 1: [2, 1] });
    expect(maintenancePlan(input(alarmed, { rules: MAINTENANCE_DEFAULTS })).reason).toBe('MAINTENANCE_NOSPACE');
    const off = maintenancePlan(input(alarmed, { rules: { ...MAINTENANCE_DEFAULTS, clearNoSpace: false } }));
    expect(off).toMatchObject({ reason: 'MAINTENANCE_OFF', steps: [] });
    expect(off.message).toMatch(/maintenance\.clearNoSpace false.*defragment by hand, one member at a time and the leader last/);
  });

  it('3 members with one dead: defragmenting either survivor would leave no quorum, so it waits, saying what a person can do', () => {
    const v = withDb(cluster(0, 3, { leader: 0, override: { 0: { alarms: ['NOSPACE'] }, 1: { alarms: ['NOSPACE'] }, 2: { paths: 'refused' } } }), {
      0: [2, 1],
      1: [2, 1],
    });
    const p = maintenancePlan(input(v));
    expect(p).toMatchObject({ reason: 'MAINTENANCE_NO_MARGIN', steps: [] });
    expect(p.message).toMatch(
      /with one member stalled by its defragmentation, 1 of 3 voting members would answer, below the quorum of 2 \(etcd-2 .* counted down\).*raise --quota-backend-bytes on every member and disarm the alarm\.$/,
    );
  });

  it('another disruption counts down too: a cordoned Node leaves 5 members no margin with one dead, and the run waits for it to end', () => {
    const base = withDb(cluster(0, 5, { leader: 0, override: { 4: { paths: 'refused' } } }), { 1: [800, 100] });
    const cordoned = { ...base, members: base.members.map((m, i) => (i === 3 ? { ...m, host: { node: 'node-3', nodeExists: true, cordoned: true } } : m)) };
    expect(maintenancePlan(input(base)).reason).toBe('MAINTENANCE_FRAGMENTED');
    const p = maintenancePlan(input(cordoned));
    expect(p).toMatchObject({ reason: 'DISRUPTION_IN_PROGRESS', steps: [] });
    expect(p.message).toMatch(
      /etcd-3 .*: its Node node-3 is cordoned \(a drain stops its pods\) counted down\): nothing is defragmented until that disruption ends/,
    );
    // With a second member dead, the cordon is not all that takes the margin: a person restores members.
    const twoDead = { ...cordoned, members: cordoned.members.map((m, i) => (i === 2 ? { ...m, healthy: false, reachable: false } : m)) };
    expect(maintenancePlan(input(twoDead)).reason).toBe('MAINTENANCE_NO_MARGIN');
  });

  it('a rollout counts one member more down: 3 members while a control-plane Machine is being created wait for it', () => {
    const v = withDb(cluster(0, 3, { leader: 0 }), { 1: [800, 100] });
    expect(maintenancePlan(input(v)).reason).toBe('MAINTENANCE_FRAGMENTED');
    const p = maintenancePlan(input({ ...v, machines: [{ name: 'cp-new', deleting: false }] }));
    expect(p.reason).toBe('DISRUPTION_IN_PROGRESS');
    expect(p.message).toMatch(/one member more \(Machine cp-new is being created/);
  });

  it('no agreed leader: it waits for the election to end', () => {
    const v = withDb(cluster(0, 3, { leader: 'none' }), { 1: [800, 100] });
    expect(maintenancePlan(input(v))).toMatchObject({ reason: 'MAINTENANCE_ELECTION', steps: [], message: expect.stringMatching(/do not agree on a leader/) });
  });

  it('a member defragmented recently is not again before memberEveryMs; a NOSPACE is never held so', () => {
    const now = 100 * 3_600_000;
    const v = withDb(cluster(0, 3, { leader: 0 }), { 1: [800, 100] });
    expect(maintenancePlan(input(v, { lastDefragmentedAt: { [id(1)]: now - 3_600_000 } }))).toMatchObject({ reason: 'MAINTENANCE_RATE_LIMITED', steps: [] });
    expect(maintenancePlan(input(v, { lastDefragmentedAt: { [id(1)]: now - 7 * 3_600_000 } })).reason).toBe('MAINTENANCE_FRAGMENTED');
    const alarmed = withDb(cluster(0, 3, { leader: 0, override: { 1: { alarms: ['NOSPACE'] } } }), { 1: [2, 1] });
    expect(maintenancePlan(input(alarmed, { lastDefragmentedAt: { [id(1)]: now - 60_000 } })).reason).toBe('MAINTENANCE_NOSPACE');
  });
});
