// The store contract, part two: the journal and step markers, the lock, identities, dead letters, the ledger.
import { beforeEach, describe, expect, it } from 'vitest';
import type { JournalLine, NamedStep } from '../../functions/core/incident/journal.ts';
import type { Incident, IncidentStore } from '../../functions/ports/incident-store.ts';
import { moveMadeLine, sampleDetails, sampleLine } from './journal-lines.ts';
import { HOUR, RACERS, type ContractContext } from './store-contract.ts';

export function recordCases(current: () => ContractContext): void {
  let store: IncidentStore;
  let incident: Incident;
  let handles: ContractContext['handles'];
  beforeEach(() => {
    ({ store, incident, handles } = current());
  });

  describe('journal and step markers', () => {
    it('returns entries in the order written, markers included', async () => {
      await store.appendJournal(incident.incidentId, { at: 30, ...sampleLine('probed') });
      await store.markStep(incident.incidentId, { at: 10, ...sampleLine('lock-taken') });
      await store.appendJournal(incident.incidentId, { at: 20, ...sampleLine('lock-released') });
      expect(await store.journal(incident.incidentId)).toEqual([
        { at: 30, ...sampleLine('probed'), isStepMarker: false },
        { at: 10, ...sampleLine('lock-taken'), isStepMarker: true },
        { at: 20, ...sampleLine('lock-released'), isStepMarker: false },
      ]);
    });

    it("every step's line, a decision and the move marker read back with the fields they were written with", async () => {
      const lines: JournalLine[] = [
        ...(Object.keys(sampleDetails) as NamedStep[]).map((step) => sampleLine(step)),
        { step: 'remediate:block', detail: { reason: 'QUORUM_AT_RISK', message: 'no.' } },
        moveMadeLine(2),
      ];
      for (const [i, line] of lines.entries()) await store.appendJournal(incident.incidentId, { at: i, ...line });
      expect(await store.journal(incident.incidentId)).toEqual(lines.map((line, i) => ({ at: i, ...line, isStepMarker: false })));
    });

    it('marks a step once, however often it is replayed', async () => {
      expect(await store.stepDone(incident.incidentId, 'member-removed')).toBe(false);
      expect(await store.markStep(incident.incidentId, { at: 1, step: 'member-removed', detail: { via: 'a1', alreadyGone: false } })).toBe(true);
      expect(await store.markStep(incident.incidentId, { at: 2, step: 'member-removed', detail: { via: 'b2', alreadyGone: false } })).toBe(false);
      expect(await store.stepDone(incident.incidentId, 'member-removed')).toBe(true);
      // A plain journal line with the same step name neither counts as the marker nor collides with it.
      await store.appendJournal(incident.incidentId, { at: 3, ...sampleLine('leader-elected') });
      expect(await store.stepDone(incident.incidentId, 'leader-elected')).toBe(false);
      expect(await store.markStep(incident.incidentId, { at: 4, ...sampleLine('leader-elected') })).toBe(true);
      const markers = (await store.journal(incident.incidentId)).filter((e) => e.isStepMarker);
      expect(markers).toEqual([
        { at: 1, step: 'member-removed', detail: { via: 'a1', alreadyGone: false }, isStepMarker: true },
        { at: 4, ...sampleLine('leader-elected'), isStepMarker: true },
      ]);
    });

    it('markers are per incident', async () => {
      const other = await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-2', target: {}, reason: 'r', now: 1 });
      expect(await store.markStep(incident.incidentId, { at: 1, ...sampleLine('actuator-called') })).toBe(true);
      expect(await store.markStep(other.incident.incidentId, { at: 1, ...sampleLine('actuator-called') })).toBe(true);
    });

    it(`${RACERS} marks of one step at once, on two handles: exactly one wins and its detail is kept`, async () => {
      const racers = await handles();
      const results = await Promise.all(
        racers.map((s, i) => s.markStep(incident.incidentId, { at: i, step: 'member-removed', detail: { via: `racer ${i}`, alreadyGone: false } })),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect((await store.journal(incident.incidentId)).filter((e) => e.step === 'member-removed')).toEqual([
        { at: winner, step: 'member-removed', detail: { via: `racer ${winner}`, alreadyGone: false }, isStepMarker: true },
      ]);
    });

    it(`${RACERS} appends at once all land, once each`, async () => {
      const racers = await handles();
      await Promise.all(
        racers.map((s, i) => s.appendJournal(incident.incidentId, { at: i, step: 'duplicate-joined', detail: { source: `racer ${i}`, reason: 'r' } })),
      );
      const lines = await store.journal(incident.incidentId);
      expect(lines.map((l) => ('detail' in l && 'source' in l.detail ? l.detail.source : '')).sort()).toEqual(racers.map((_, i) => `racer ${i}`).sort());
    });

    it('a closed incident takes journal lines and markers still (late duplicates, owed journal lines)', async () => {
      await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: null, now: 5 });
      await store.appendJournal(incident.incidentId, { at: 6, ...sampleLine('late-duplicate') });
      expect(await store.markStep(incident.incidentId, { at: 7, ...sampleLine('actuator-called') })).toBe(true);
      expect((await store.journal(incident.incidentId)).map((e) => e.step)).toEqual(['late-duplicate', 'actuator-called']);
    });

    it('an unknown incident has no journal and no step done', async () => {
      expect(await store.journal('missing')).toEqual([]);
      expect(await store.stepDone('missing', 'member-removed')).toBe(false);
    });
  });

  describe('cluster lock', () => {
    it('acquire, renew, deny, expire, steal, release', async () => {
      expect(await store.acquireLock('c1', 'a', 1_000, 0)).toBe(true);
      expect(await store.acquireLock('c1', 'b', 1_000, 500)).toBe(false);
      // The owner renews: its lease now runs to 1_800.
      expect(await store.acquireLock('c1', 'a', 1_000, 800)).toBe(true);
      expect(await store.acquireLock('c1', 'b', 1_000, 1_500)).toBe(false);
      // Expired: anyone may take it, and the old owner can no longer release it.
      expect(await store.acquireLock('c1', 'b', 1_000, 1_800)).toBe(true);
      expect(await store.releaseLock('c1', 'a')).toBe(false);
      expect(await store.acquireLock('c1', 'a', 1_000, 1_900)).toBe(false);
      expect(await store.releaseLock('c1', 'b')).toBe(true);
      expect(await store.acquireLock('c1', 'a', 1_000, 1_901)).toBe(true);
    });

    it('locks are per cluster', async () => {
      expect(await store.acquireLock('c1', 'a', 1_000, 0)).toBe(true);
      expect(await store.acquireLock('c2', 'b', 1_000, 0)).toBe(true);
    });

    it('rejects a lease that is not positive', async () => {
      await expect(store.acquireLock('c1', 'a', 0, 0)).rejects.toBeInstanceOf(RangeError);
    });

    it('releasing a free lock, or twice, releases nothing', async () => {
      expect(await store.releaseLock('c1', 'a')).toBe(false);
      expect(await store.acquireLock('c1', 'a', 1_000, 0)).toBe(true);
      expect(await store.releaseLock('c1', 'a')).toBe(true);
      expect(await store.releaseLock('c1', 'a')).toBe(false);
    });

    it(`${RACERS} owners at once, on two handles: exactly one takes the lock; after its lease, exactly one takes it over`, async () => {
      const racers = await handles();
      const first = await Promise.all(racers.map((s, i) => s.acquireLock('c1', `owner-${i}`, 1_000, 0)));
      expect(first.filter(Boolean)).toHaveLength(1);
      const holder = `owner-${first.indexOf(true)}`;
      const later = await Promise.all(racers.map((s, i) => s.acquireLock('c1', `later-${i}`, 1_000, 1_000)));
      expect(later.filter(Boolean)).toHaveLength(1);
      expect(await store.releaseLock('c1', holder)).toBe(false);
      expect(await store.releaseLock('c1', `later-${later.indexOf(true)}`)).toBe(true);
    });
  });

  describe('removal record of a single-remediator cluster', () => {
    const record = (memberId: string, at: number) => ({
      memberId,
      memberName: `etcd-${memberId}`,
      incidentId: `i-${memberId}`,
      targetKey: `memberId=${memberId}`,
      at,
      sizeBefore: 3,
      by: `incident:i-${memberId}:r1`,
    });

    it('is empty until written, is replaced whole, and is kept per cluster', async () => {
      expect(await store.removalRecords('c1')).toEqual([]);
      await store.saveRemovalRecords('c1', [record('a', 1)]);
      await store.saveRemovalRecords('c1', [record('a', 1), { ...record('b', 2), confirmed: true }]);
      await store.saveRemovalRecords('c2', [record('z', 9)]);
      expect(await store.removalRecords('c1')).toEqual([record('a', 1), { ...record('b', 2), confirmed: true }]);
      expect(await store.removalRecords('c2')).toEqual([record('z', 9)]);
      // Seen by another handle on the same store: it is the state every run of this state shares.
      expect(await (await handles()).at(-1)!.removalRecords('c1')).toHaveLength(2);
    });
  });

  describe('learner sightings of a cluster', () => {
    it('are empty until written; a write replaces the record, a learner gone from it drops out; clusters are apart', async () => {
      expect(await store.learnerSightings('c1')).toEqual({});
      expect(await store.saveLearnerSightings('c1', { a: 10, b: 20 })).toEqual({ a: 10, b: 20 });
      expect(await store.saveLearnerSightings('c1', { b: 20, c: 30 })).toEqual({ b: 20, c: 30 });
      await store.saveLearnerSightings('c2', { z: 5 });
      expect(await store.learnerSightings('c1')).toEqual({ b: 20, c: 30 });
      expect(await store.learnerSightings('c2')).toEqual({ z: 5 });
      expect(await store.saveLearnerSightings('c1', {})).toEqual({});
      expect(await store.learnerSightings('c1')).toEqual({});
    });

    it('keep the earlier first sighting of a member: a later one never resets its clock; writing twice changes nothing', async () => {
      await store.saveLearnerSightings('c1', { a: 10 });
      expect(await store.saveLearnerSightings('c1', { a: 50, b: 60 })).toEqual({ a: 10, b: 60 });
      expect(await store.saveLearnerSightings('c1', { a: 50, b: 60 })).toEqual({ a: 10, b: 60 });
      expect(await store.saveLearnerSightings('c1', { a: 5, b: 60 })).toEqual({ a: 5, b: 60 });
      expect(await (await handles()).at(-1)!.learnerSightings('c1')).toEqual({ a: 5, b: 60 });
    });

    it(`${RACERS} writers at once, on two handles, each with its own first sighting of one learner: the earliest is kept`, async () => {
      const racers = await handles();
      await Promise.all(racers.map((s, i) => s.saveLearnerSightings('c1', { a: 100 + i, [`only-${i}`]: i })));
      const stored = await store.learnerSightings('c1');
      expect(stored.a).toBe(100);
    });
  });

  describe('cluster identities', () => {
    it('the first identity remembered wins; clusters are apart', async () => {
      expect(await store.knownIdentity('c1')).toBeUndefined();
      expect(await store.rememberIdentity('c1', 'aaaa', 10)).toEqual({ etcdClusterId: 'aaaa', since: 10 });
      expect(await store.rememberIdentity('c1', 'bbbb', 20)).toEqual({ etcdClusterId: 'aaaa', since: 10 });
      expect(await store.knownIdentity('c1')).toEqual({ etcdClusterId: 'aaaa', since: 10 });
      expect(await store.rememberIdentity('c2', 'bbbb', 30)).toEqual({ etcdClusterId: 'bbbb', since: 30 });
    });

    it(`${RACERS} first probes at once, on two handles: all are told the one identity that won`, async () => {
      const racers = await handles();
      const results = await Promise.all(racers.map((s, i) => s.rememberIdentity('c5', `id-${i}`, i)));
      const known = await store.knownIdentity('c5');
      expect(known).toBeDefined();
      for (const r of results) expect(r).toEqual(known);
    });
  });

  describe('dead letters', () => {
    it('round-trip the raw payload, oldest first', async () => {
      const first = await store.putDeadLetter({
        receivedAt: 10,
        source: 'aws.ec2',
        detailType: 'EC2 Instance State-change Notification',
        payload: '{"not":"valid',
        error: 'Unexpected end of JSON input',
      });
      await store.putDeadLetter({ receivedAt: 5, source: 'cli', detailType: 'MemberUnhealthy', payload: '', error: 'empty' });
      const letters = await store.listDeadLetters();
      expect(letters).toHaveLength(2);
      expect(letters[0]).toEqual(first);
      expect(letters[0]?.payload).toBe('{"not":"valid');
      expect(letters[1]).toMatchObject({ source: 'cli', payload: '', error: 'empty' });
      expect(letters[0]?.id).not.toBe(letters[1]?.id);
    });

    it('none to start; a large payload comes back byte for byte', async () => {
      expect(await store.listDeadLetters()).toEqual([]);
      const payload = `{"detail":"${'ünïcödé ✓ '.repeat(20_000)}"`;
      const letter = await store.putDeadLetter({ receivedAt: 1, source: 'aws.health', detailType: 'AWS Health Event', payload, error: 'too big' });
      expect(await store.listDeadLetters()).toEqual([letter]);
    });
  });

  describe('remediation history (KCP retry budget)', () => {
    const history = (now: number) => store.remediationHistory('c1', 'memberName=etcd-0', { minHealthyPeriodMs: HOUR, now });

    it('counts a chain of remediations each within minHealthyPeriod of the previous one', async () => {
      expect(await history(0)).toEqual({ retryCount: 0 });
      await store.recordRemediation('c1', 'memberName=etcd-0', 0);
      expect(await history(10)).toEqual({ lastRemediatedAt: 0, retryCount: 1 });
      await store.recordRemediation('c1', 'memberName=etcd-0', 30 * 60_000);
      await store.recordRemediation('c1', 'memberName=etcd-0', 90 * 60_000);
      expect(await history(100 * 60_000)).toEqual({ lastRemediatedAt: 90 * 60_000, retryCount: 3 });
      // Replaying the same record changes nothing.
      await store.recordRemediation('c1', 'memberName=etcd-0', 90 * 60_000);
      expect((await history(100 * 60_000)).retryCount).toBe(3);
    });

    it('a target healthy for minHealthyPeriod starts a fresh count', async () => {
      await store.recordRemediation('c1', 'memberName=etcd-0', 0);
      await store.recordRemediation('c1', 'memberName=etcd-0', HOUR / 2);
      expect(await history(HOUR / 2 + HOUR + 1)).toEqual({ lastRemediatedAt: HOUR / 2, retryCount: 0 });
      // A gap longer than the period breaks the chain: only the newest remediation counts.
      await store.recordRemediation('c1', 'memberName=etcd-0', 3 * HOUR);
      expect(await history(3 * HOUR + 1)).toEqual({ lastRemediatedAt: 3 * HOUR, retryCount: 1 });
    });

    it('keeps targets and clusters apart', async () => {
      await store.recordRemediation('c1', 'memberName=etcd-1', 0);
      await store.recordRemediation('c2', 'memberName=etcd-0', 0);
      expect(await history(1)).toEqual({ retryCount: 0 });
    });

    it('keeps apart cluster and target names that would run together', async () => {
      await store.recordRemediation('a#b', 'c', 0);
      expect(await store.remediationHistory('a', 'b#c', { minHealthyPeriodMs: HOUR, now: 1 })).toEqual({ retryCount: 0 });
      expect(await store.remediationHistory('a#b', 'c', { minHealthyPeriodMs: HOUR, now: 1 })).toEqual({ lastRemediatedAt: 0, retryCount: 1 });
    });
  });
}
