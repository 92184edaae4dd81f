import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { remediationHistoryFrom } from '../../../functions/core/remediation-history.ts';
import { targetKeyOf } from '../../../functions/core/target.ts';
import { MAX_INCIDENT_VIEWS, withView } from '../../../functions/core/view-history.ts';
import type { ClusterView } from '../../../functions/core/view.ts';
import { IncidentNotFoundError, VersionConflictError, type Incident } from '../../../functions/ports/incident-store.ts';
import { migrations } from '../../../infra/local/sqlite-migrations.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../infra/local/sqlite-store.ts';
import { tempDir, type TempDir } from './helpers.ts';

const HOUR = 3_600_000;

const view = (at: number): ClusterView => ({
  at,
  members: [],
  leader: { consensus: 'none', reports: [] },
  quorum: { voting: 3, healthyVoting: 2, votingUp: 2, size: 2, ok: true },
  listFailures: [],
});

describe('sqlite incident store', () => {
  let dir: TempDir;
  let store: SqliteIncidentStore;
  let incident: Incident;

  beforeEach(async () => {
    dir = tempDir();
    store = openSqliteStore({ path: dir.file('store.db') });
    ({ incident } = await store.openOrJoin({
      clusterId: 'c1',
      targetKey: targetKeyOf({ memberName: 'etcd-0' }),
      target: { memberName: 'etcd-0' },
      reason: 'kubelet gone',
      now: 1_000,
    }));
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  describe('incidents', () => {
    it('opens with defaults and reads back what it stored', async () => {
      expect(incident).toMatchObject({
        clusterId: 'c1',
        targetKey: 'memberName=etcd-0',
        target: { memberName: 'etcd-0' },
        reason: 'kubelet gone',
        state: 'open',
        openedAt: 1_000,
        updatedAt: 1_000,
        attempt: 0,
        immediateReprobes: 0,
        views: [],
        version: 1,
      });
      expect(incident.memberId).toBeUndefined();
      expect(await store.getIncident(incident.incidentId)).toEqual(incident);
      expect(await store.getIncident('missing')).toBeUndefined();
    });

    it('updates with the expected version and bumps it', async () => {
      const decision = { kind: 'block' as const, reason: 'NO_QUORUM' as const, message: 'no quorum', evidence: { voting: 3 } };
      const updated = await store.updateIncident(
        incident.incidentId,
        { attempt: 2, memberId: '8e9e05c52164694d', memberName: 'etcd-0', views: [view(1), view(2)], lastDecision: decision },
        { expectVersion: 1, now: 2_000 },
      );
      expect(updated).toMatchObject({ attempt: 2, memberId: '8e9e05c52164694d', memberName: 'etcd-0', version: 2, updatedAt: 2_000 });
      expect(updated.views.map((v) => v.at)).toEqual([1, 2]);
      expect(updated.lastDecision).toEqual(decision);
      expect(await store.getIncident(incident.incidentId)).toEqual(updated);
    });

    it('leaves fields a patch sets to undefined as they were', async () => {
      const first = await store.updateIncident(incident.incidentId, { memberName: 'etcd-0' }, { expectVersion: 1, now: 2 });
      const second = await store.updateIncident(incident.incidentId, { memberName: undefined, attempt: 1 }, { expectVersion: 2, now: 3 });
      expect(first.memberName).toBe('etcd-0');
      expect(second).toMatchObject({ memberName: 'etcd-0', attempt: 1 });
    });

    it('refuses a stale version with a typed conflict and keeps the winner', async () => {
      await store.updateIncident(incident.incidentId, { attempt: 1 }, { expectVersion: 1, now: 2_000 });
      const stale = store.updateIncident(incident.incidentId, { attempt: 5 }, { expectVersion: 1, now: 2_001 });
      await expect(stale).rejects.toBeInstanceOf(VersionConflictError);
      await expect(stale).rejects.toMatchObject({ expectedVersion: 1, actualVersion: 2 });
      expect((await store.getIncident(incident.incidentId))?.attempt).toBe(1);
    });

    it('two connections writing the same version: exactly one wins', async () => {
      const other = openSqliteStore({ path: dir.file('store.db') });
      try {
        const [a, b] = await Promise.allSettled([
          store.updateIncident(incident.incidentId, { attempt: 1 }, { expectVersion: 1, now: 2 }),
          other.updateIncident(incident.incidentId, { attempt: 2 }, { expectVersion: 1, now: 2 }),
        ]);
        expect([a.status, b.status].sort()).toEqual(['fulfilled', 'rejected']);
        expect((await other.getIncident(incident.incidentId))?.version).toBe(2);
      } finally {
        await other.close();
      }
    });

    it('keeps only the newest views, oldest first', async () => {
      const many = Array.from({ length: MAX_INCIDENT_VIEWS + 3 }, (_, i) => view(i));
      const updated = await store.updateIncident(incident.incidentId, { views: many }, { expectVersion: 1, now: 2 });
      expect(updated.views.map((v) => v.at)).toEqual(many.slice(3).map((v) => v.at));
      expect(withView(updated.views, view(99)).map((v) => v.at)).toEqual([...many.slice(4).map((v) => v.at), 99]);
    });

    it('unknown incidents give a typed not-found error', async () => {
      await expect(store.updateIncident('nope', {}, { expectVersion: 1, now: 1 })).rejects.toBeInstanceOf(IncidentNotFoundError);
      await expect(store.closeIncident('nope', { outcome: 'failed', result: null, now: 1 })).rejects.toBeInstanceOf(
        IncidentNotFoundError,
      );
      await expect(store.appendJournal('nope', { at: 1, step: 'x' })).rejects.toBeInstanceOf(IncidentNotFoundError);
      await expect(store.markStep('nope', { at: 1, step: 'x' })).rejects.toBeInstanceOf(IncidentNotFoundError);
    });

    it('closes once: the first outcome wins', async () => {
      const closed = await store.closeIncident(incident.incidentId, { outcome: 'remediated', result: { removed: 'etcd-0' }, now: 5_000 });
      expect(closed).toMatchObject({ state: 'remediated', result: { removed: 'etcd-0' }, updatedAt: 5_000, version: 2 });
      const again = await store.closeIncident(incident.incidentId, { outcome: 'failed', result: 'late', now: 6_000 });
      expect(again).toEqual(closed);
    });

    it('close honours expectVersion', async () => {
      await expect(
        store.closeIncident(incident.incidentId, { outcome: 'failed', result: null, now: 2, expectVersion: 7 }),
      ).rejects.toBeInstanceOf(VersionConflictError);
      expect((await store.getIncident(incident.incidentId))?.state).toBe('open');
    });

    it('lists by cluster and state, oldest first', async () => {
      const b = await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-1', target: {}, reason: 'r', now: 2_000 });
      const c = await store.openOrJoin({ clusterId: 'c2', targetKey: 'memberName=etcd-0', target: {}, reason: 'r', now: 3_000 });
      await store.closeIncident(b.incident.incidentId, { outcome: 'failed', result: null, now: 4_000 });
      const ids = (list: Incident[]) => list.map((i) => i.incidentId);
      expect(ids(await store.listIncidents())).toEqual([incident.incidentId, b.incident.incidentId, c.incident.incidentId]);
      expect(ids(await store.listIncidents({ clusterId: 'c1' }))).toEqual([incident.incidentId, b.incident.incidentId]);
      expect(ids(await store.listIncidents({ clusterId: 'c1', state: 'open' }))).toEqual([incident.incidentId]);
      expect(ids(await store.listIncidents({ state: 'failed' }))).toEqual([b.incident.incidentId]);
    });
  });

  describe('journal and step markers', () => {
    it('returns entries in the order written, markers included', async () => {
      await store.appendJournal(incident.incidentId, { at: 30, step: 'probed', detail: { members: 3 } });
      await store.markStep(incident.incidentId, { at: 10, step: 'lock-taken' });
      await store.appendJournal(incident.incidentId, { at: 20, step: 'note' });
      expect(await store.journal(incident.incidentId)).toEqual([
        { at: 30, step: 'probed', detail: { members: 3 }, isStepMarker: false },
        { at: 10, step: 'lock-taken', isStepMarker: true },
        { at: 20, step: 'note', isStepMarker: false },
      ]);
    });

    it('marks a step once, however often it is replayed', async () => {
      expect(await store.stepDone(incident.incidentId, 'member-removed')).toBe(false);
      expect(await store.markStep(incident.incidentId, { at: 1, step: 'member-removed', detail: { id: 'a1' } })).toBe(true);
      expect(await store.markStep(incident.incidentId, { at: 2, step: 'member-removed', detail: { id: 'b2' } })).toBe(false);
      expect(await store.stepDone(incident.incidentId, 'member-removed')).toBe(true);
      // A plain journal line with the same step name neither counts as the marker nor collides with it.
      await store.appendJournal(incident.incidentId, { at: 3, step: 'leader-elected' });
      expect(await store.stepDone(incident.incidentId, 'leader-elected')).toBe(false);
      expect(await store.markStep(incident.incidentId, { at: 4, step: 'leader-elected' })).toBe(true);
      const markers = (await store.journal(incident.incidentId)).filter((e) => e.isStepMarker);
      expect(markers).toEqual([
        { at: 1, step: 'member-removed', detail: { id: 'a1' }, isStepMarker: true },
        { at: 4, step: 'leader-elected', isStepMarker: true },
      ]);
    });

    it('markers are per incident', async () => {
      const other = await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-2', target: {}, reason: 'r', now: 1 });
      expect(await store.markStep(incident.incidentId, { at: 1, step: 'actuator-called' })).toBe(true);
      expect(await store.markStep(other.incident.incidentId, { at: 1, step: 'actuator-called' })).toBe(true);
    });
  });

  describe('step state on the incident', () => {
    it('keeps the outbox, the steps done and the lease, across connections, and clears them', async () => {
      const event = { source: 'etcd-remediator' as const, detailType: 'RetryDue' as const, detail: { incidentId: incident.incidentId, clusterId: 'c1', attempt: 1, at: '2025-01-01T00:00:00.000Z', reason: 'ELECTION_IN_PROGRESS' as const } };
      const written = await store.updateIncident(
        incident.incidentId,
        { outbox: [{ kind: 'publish', event }, { kind: 'journal', entry: { at: 2, step: 'x' } }], stepsDone: ['probe-members@0'], inFlight: { key: 'move-leader@0', until: 99 } },
        { expectVersion: incident.version, now: 2 },
      );
      const other = openSqliteStore({ path: dir.file('store.db') });
      try {
        const read = (await other.getIncident(incident.incidentId))!;
        expect(read.outbox).toEqual([{ kind: 'publish', event }, { kind: 'journal', entry: { at: 2, step: 'x' } }]);
        expect(read.stepsDone).toEqual(['probe-members@0']);
        expect(read.inFlight).toEqual({ key: 'move-leader@0', until: 99 });
      } finally {
        await other.close();
      }
      const cleared = await store.updateIncident(incident.incidentId, { outbox: [], inFlight: null }, { expectVersion: written.version, now: 3 });
      expect(cleared.outbox).toEqual([]);
      expect(cleared.inFlight).toBeUndefined();
      expect(cleared.stepsDone).toEqual(['probe-members@0']);
    });

    it('closes through a patch once: a closed incident is never closed again, whatever the version', async () => {
      const closed = await store.updateIncident(incident.incidentId, { state: 'blocked', result: { reason: 'NO_QUORUM' } }, { expectVersion: incident.version, now: 2 });
      expect(closed.state).toBe('blocked');
      await expect(store.updateIncident(incident.incidentId, { state: 'remediated' }, { expectVersion: closed.version, now: 3 })).rejects.toBeInstanceOf(VersionConflictError);
      // Clearing the outbox of a closed incident is still allowed: its last event may be owed.
      expect((await store.updateIncident(incident.incidentId, { outbox: [] }, { expectVersion: closed.version, now: 3 })).state).toBe('blocked');
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

    it('boundary: exactly minHealthyPeriod still chains', () => {
      expect(remediationHistoryFrom([HOUR, 0], { minHealthyPeriodMs: HOUR, now: 2 * HOUR })).toEqual({
        lastRemediatedAt: HOUR,
        retryCount: 2,
      });
      expect(remediationHistoryFrom([0, HOUR + 1], { minHealthyPeriodMs: HOUR, now: HOUR + 2 }).retryCount).toBe(1);
    });
  });

  describe('schema', () => {
    it('records its migrations and reopens an existing file without redoing them', async () => {
      await store.close();
      store = openSqliteStore({ path: dir.file('store.db') });
      expect(await store.getIncident(incident.incidentId)).toEqual(incident);
      const raw = new DatabaseSync(dir.file('store.db'), { readOnly: true });
      try {
        expect(raw.prepare('SELECT version FROM schema_migrations ORDER BY version').all().map((r) => r.version)).toEqual(
          migrations.map((_, i) => i + 1),
        );
        expect(raw.prepare('PRAGMA journal_mode').get()?.journal_mode).toBe('wal');
      } finally {
        raw.close();
      }
    });

    it('refuses a file from a newer build', async () => {
      await store.close();
      const raw = new DatabaseSync(dir.file('store.db'));
      raw.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(migrations.length + 1);
      raw.close();
      expect(() => openSqliteStore({ path: dir.file('store.db') })).toThrow(
        `state file ${dir.file('store.db')}: was written by a newer etcd-remediator (schema ${migrations.length + 1}; this one knows up to ${migrations.length})`,
      );
      store = openSqliteStore({ path: ':memory:' });
    });
  });

  it('targetKeyOf is canonical whatever the key order', () => {
    expect(targetKeyOf({ nodeName: 'n1', memberName: 'etcd-0' })).toBe('memberName=etcd-0,nodeName=n1');
    expect(targetKeyOf({ memberName: 'etcd-0', nodeName: 'n1' })).toBe(targetKeyOf({ nodeName: 'n1', memberName: 'etcd-0' }));
  });
});
