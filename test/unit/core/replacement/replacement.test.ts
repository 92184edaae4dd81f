import { describe, expect, it } from 'vitest';
import {
  removalByAnother,
  removalRecordFor,
  removalTimesOf,
  removedByAnother,
  replacementPending,
  withRecord,
  MAX_REMOVAL_RECORDS,
  type RemovalRecord,
} from '../../../../functions/core/replacement/replacement.ts';
import { id, view } from '../fixtures.ts';

const T = Date.parse('2026-01-01T00:00:00Z');
const members = (n: number) =>
  view(
    T,
    Array.from({ length: n }, (_, i) => ({ i, leader: 0 })),
  );
const record = (over: Partial<RemovalRecord> = {}): RemovalRecord => ({
  memberId: id(3),
  memberName: 'etcd-3',
  incidentId: 'earlier',
  targetKey: 'memberName=etcd-3',
  at: T - 60_000,
  sizeBefore: 3,
  by: 'incident:earlier:0001',
  ...over,
});
const ctx = (n: number, over: Partial<Parameters<typeof replacementPending>[1]> = {}) => ({
  view: members(n),
  targetId: id(1),
  incidentId: 'now',
  allowShrink: false,
  now: T,
  ...over,
});

describe('replacementPending', () => {
  it.each([
    ['no removal recorded', [], 2, {}, false],
    ['the cluster is back to its size', [record()], 3, {}, false],
    ['the cluster grew past it', [record()], 4, {}, false],
    ['still short after another removal', [record()], 2, {}, true],
    ['short, but shrinking is allowed', [record()], 2, { allowShrink: true }, false],
    ['short, but the newest record is this incident own removal', [record(), record({ incidentId: 'now', at: T - 1_000 })], 2, {}, false],
    ['the newest record decides, not an older one', [record({ sizeBefore: 2, at: T - 1_000 }), record({ sizeBefore: 5, at: T - 90_000 })], 2, {}, false],
  ] as const)('%s', (_, records, n, over, blocks) => {
    const decision = replacementPending(records, ctx(n, over));
    expect(decision?.reason).toBe(blocks ? 'REPLACEMENT_PENDING' : undefined);
  });

  it('names the removed member, when, by whom, the sizes, and both ways out', () => {
    const decision = replacementPending([record()], ctx(2));
    expect(decision).toMatchObject({ kind: 'block', reason: 'REPLACEMENT_PENDING', evidence: { votingNow: 2 } });
    expect(decision!.message).toBe(
      'etcd-3 (a8266ecf031671f3) was removed 60 s ago (2025-12-31T23:59:00.000Z, by incident:earlier:0001), leaving 2 of the 3 voting members the cluster had, and no replacement has joined since; ' +
        'blocked, etcd-1 (91bc3c398fb3c146) is not removed while the cluster is short. Add the replacement (or bring etcd-3 back), then report etcd-1 (91bc3c398fb3c146) again; or allow shrinking (--allow-shrink, policy allowShrink) if a smaller cluster is intended.',
    );
  });
});

describe('removalRecordFor', () => {
  it('records the size now when nothing is owed', () => {
    expect(removalRecordFor([], { ...ctx(3), by: 'me', targetKey: 'memberName=etcd-1' })).toEqual({
      memberId: id(1),
      memberName: 'etcd-1',
      incidentId: 'now',
      targetKey: 'memberName=etcd-1',
      at: T,
      sizeBefore: 3,
      by: 'me',
    });
  });

  it('keeps a size still owed, so removing a learner or shrinking on purpose never erases it', () => {
    expect(removalRecordFor([record({ sizeBefore: 5 })], { ...ctx(3), by: 'me', targetKey: 'k' }).sizeBefore).toBe(5);
    expect(removalRecordFor([record({ sizeBefore: 2 })], { ...ctx(3), by: 'me', targetKey: 'k' }).sizeBefore).toBe(3);
  });
});

describe('the removal history', () => {
  it('replaces an incident own intent with its confirmation, and keeps the newest few', () => {
    const intent = record({ incidentId: 'x', at: T });
    const both = withRecord(withRecord([record()], intent), { ...intent, confirmed: true });
    expect(both.map((r) => [r.incidentId, r.confirmed])).toEqual([
      ['earlier', undefined],
      ['x', true],
    ]);
    let many: RemovalRecord[] = [];
    for (let i = 0; i < MAX_REMOVAL_RECORDS + 5; i++) many = withRecord(many, record({ incidentId: `i${i}`, at: T + i }));
    expect(many).toHaveLength(MAX_REMOVAL_RECORDS);
    expect(many[0]!.incidentId).toBe('i5');
  });

  it('counts only confirmed removals of the same target, for KCP retry limits', () => {
    const records = [
      record({ confirmed: true, at: 1 }),
      record({ at: 2 }),
      record({ confirmed: true, targetKey: 'other', at: 3 }),
      record({ confirmed: true, at: 4 }),
    ];
    expect(removalTimesOf(records, 'memberName=etcd-3')).toEqual([1, 4]);
  });
});

describe('removedByAnother', () => {
  const mine = { incidentId: 'now', memberId: id(3), name: 'etcd-3', memberGone: false, replacedByIt: true };
  it.each([
    ['a confirmed removal by another incident', [record({ confirmed: true })], mine, true],
    ['an intent by another, the member still listed: it is mid-removal, the lock decides', [record()], mine, false],
    ['an intent by another, the member gone from the list: it sent MemberRemove', [record()], { ...mine, memberGone: true }, true],
    ['this incident own removal', [record({ incidentId: 'now', confirmed: true })], mine, false],
    ['another member removed', [record({ memberId: id(2), memberName: 'etcd-2', confirmed: true })], mine, false],
    [
      'named by name only (the selector matched no member)',
      [record({ confirmed: true })],
      { incidentId: 'now', memberName: 'etcd-3', name: 'etcd-3', memberGone: true, replacedByIt: true },
      true,
    ],
  ] as const)('%s', (_, records, ctx, closes) => {
    expect(removedByAnother(records, ctx)?.reason).toBe(closes ? 'DUPLICATE_INCIDENT' : undefined);
    expect(removalByAnother(records, ctx)?.incidentId).toBe(closes ? 'earlier' : undefined);
  });

  it('an incident of this state replaces the machine: closes, naming who removed it, when, and that this incident ends', () => {
    const decision = removedByAnother([record({ confirmed: true })], { ...mine, machineName: 'wl-cp-3' });
    expect(decision).toMatchObject({ kind: 'close', reason: 'DUPLICATE_INCIDENT', evidence: { incidentId: 'earlier', removedBy: 'incident:earlier:0001' } });
    expect(decision!.message).toBe(
      'etcd-3 was removed by incident earlier at 2025-12-31T23:59:00.000Z (incident:earlier:0001), which replaces its machine; nothing is left for this incident to do, and it ends.',
    );
  });

  it('a remediator this state does not hold, and the report named a Machine: this incident replaces the Machine, removing nothing', () => {
    const decision = removedByAnother([record({ confirmed: true })], { ...mine, replacedByIt: false, machineName: 'wl-cp-3' });
    expect(decision).toMatchObject({
      kind: 'approve',
      reason: 'MEMBER_ALREADY_REMOVED',
      leaderMove: 'not-needed',
      evidence: { incidentId: 'earlier', removedBy: 'incident:earlier:0001', machine: 'wl-cp-3' },
    });
    expect(decision!.message).toMatch(
      /^etcd-3 was removed by incident earlier at 2025-12-31T23:59:00.000Z \(incident:earlier:0001\), which this state does not hold, so nothing here replaces Machine wl-cp-3: this incident replaces it/,
    );
  });

  it('a remediator this state does not hold, and no Machine named: closes without claiming who replaces the machine', () => {
    const decision = removedByAnother([record({ confirmed: true })], { ...mine, replacedByIt: false });
    expect(decision).toMatchObject({ kind: 'close', reason: 'DUPLICATE_INCIDENT', evidence: { incidentId: 'earlier' } });
    expect(decision!.message).not.toMatch(/which replaces/);
    expect(decision!.message).toMatch(/that remediator's to replace/);
  });
});
