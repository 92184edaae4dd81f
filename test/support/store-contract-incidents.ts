// The store contract, part one: incidents, one open incident per target, step state on the incident.
import { beforeEach, describe, expect, it } from 'vitest';
import { INCIDENT_ID_PATTERN } from '../../functions/core/incident/incident-id.ts';
import { keptViews, MAX_HISTORY_BYTES, MAX_INCIDENT_VIEWS, viewBytes, withView } from '../../functions/core/view/view-history.ts';
import { IncidentNotFoundError, VersionConflictError, type Incident, type IncidentStore } from '../../functions/ports/incident-store.ts';
import { moveMadeLine, sampleLine } from './journal-lines.ts';
import { worstView } from './worst-case-view.ts';
import { RACERS, view, type ContractContext } from './store-contract.ts';

export function incidentCases(current: () => ContractContext): void {
  let store: IncidentStore;
  let incident: Incident;
  let another: ContractContext['another'];
  let handles: ContractContext['handles'];
  beforeEach(() => {
    ({ store, incident, another, handles } = current());
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
      // Minted in the one shape every edge takes an id in.
      expect(incident.incidentId).toMatch(INCIDENT_ID_PATTERN);
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

    it('two handles writing the same version: exactly one wins', async () => {
      const other = await another();
      const [a, b] = await Promise.allSettled([
        store.updateIncident(incident.incidentId, { attempt: 1 }, { expectVersion: 1, now: 2 }),
        other.updateIncident(incident.incidentId, { attempt: 2 }, { expectVersion: 1, now: 2 }),
      ]);
      expect([a.status, b.status].sort()).toEqual(['fulfilled', 'rejected']);
      expect((await other.getIncident(incident.incidentId))?.version).toBe(2);
    });

    it(`${RACERS} writers of one version at once: exactly one wins, the rest get a typed conflict`, async () => {
      const racers = await handles();
      const results = await Promise.allSettled(racers.map((s, i) => s.updateIncident(incident.incidentId, { attempt: i + 1 }, { expectVersion: 1, now: 2 })));
      const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(won).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflictError);
      expect(await store.getIncident(incident.incidentId)).toEqual(won[0]);
      expect(won[0]?.version).toBe(2);
    });

    it('keeps only the newest views, oldest first', async () => {
      const many = Array.from({ length: MAX_INCIDENT_VIEWS + 3 }, (_, i) => view(i));
      const updated = await store.updateIncident(incident.incidentId, { views: many }, { expectVersion: 1, now: 2 });
      expect(updated.views.map((v) => v.at)).toEqual(many.slice(3).map((v) => v.at));
      expect(withView(updated.views, view(99)).map((v) => v.at)).toEqual([...many.slice(4).map((v) => v.at), 99]);
    });

    it('keeps views within MAX_HISTORY_BYTES, the newest first: as large as the view limits let them grow, two or three', async () => {
      const views = Array.from({ length: MAX_INCIDENT_VIEWS }, (_, i) => worstView(7, i));
      const updated = await store.updateIncident(incident.incidentId, { views }, { expectVersion: 1, now: 2 });
      const kept = updated.views.map((v) => v.at);
      expect(kept).toEqual(keptViews(views).map((v) => v.at));
      expect(kept.length).toBeGreaterThanOrEqual(2);
      expect(kept.at(-1)).toBe(MAX_INCIDENT_VIEWS - 1);
      expect(updated.views.reduce((sum, v) => sum + viewBytes(v), 0)).toBeLessThanOrEqual(MAX_HISTORY_BYTES);
      expect(await store.getIncident(incident.incidentId)).toEqual(updated);
    });

    it('keeps large views and outboxes exactly as written', async () => {
      // About 16 KB a view, ten times over: the whole history still fits MAX_HISTORY_BYTES.
      const views = Array.from({ length: MAX_INCIDENT_VIEWS }, (_, i) => view(i, `etcd-${i} ${'é✓ connection refused; '.repeat(600)}`));
      const event = {
        source: 'etcd-remediator' as const,
        detailType: 'RetryDue' as const,
        detail: { incidentId: incident.incidentId, clusterId: 'c1', attempt: 1, at: '2025-01-01T00:00:00.000Z', reason: 'ELECTION_IN_PROGRESS' as const },
      };
      const made = moveMadeLine(1);
      const outbox = [
        { kind: 'journal' as const, entry: { at: 1, step: made.step, detail: { ...made.detail, views } } },
        { kind: 'publish' as const, event },
      ];
      const updated = await store.updateIncident(incident.incidentId, { views, outbox, result: { views } }, { expectVersion: 1, now: 2 });
      expect(updated.views).toEqual(views);
      expect(updated.outbox).toEqual(outbox);
      expect(await store.getIncident(incident.incidentId)).toEqual(updated);
    });

    it('unknown incidents give a typed not-found error', async () => {
      await expect(store.updateIncident('nope', {}, { expectVersion: 1, now: 1 })).rejects.toBeInstanceOf(IncidentNotFoundError);
      await expect(store.closeIncident('nope', { outcome: 'failed', result: null, now: 1 })).rejects.toBeInstanceOf(IncidentNotFoundError);
      await expect(store.appendJournal('nope', { at: 1, ...sampleLine('probed') })).rejects.toBeInstanceOf(IncidentNotFoundError);
      await expect(store.markStep('nope', { at: 1, ...sampleLine('lock-taken') })).rejects.toBeInstanceOf(IncidentNotFoundError);
    });

    it('closes once: the first outcome wins', async () => {
      const closed = await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: { removed: 'etcd-0' }, now: 5_000 });
      expect(closed).toMatchObject({ state: 'awaiting-replacement', result: { removed: 'etcd-0' }, updatedAt: 5_000, version: 2 });
      const again = await store.closeIncident(incident.incidentId, { outcome: 'failed', result: 'late', now: 6_000 });
      expect(again).toEqual(closed);
    });

    it(`${RACERS} closes at once: one outcome wins and every caller gets it`, async () => {
      const racers = await handles();
      const outcomes = ['awaiting-replacement', 'blocked', 'failed'] as const;
      const results = await Promise.all(
        racers.map((s, i) => s.closeIncident(incident.incidentId, { outcome: outcomes[i % 3]!, result: { by: i }, now: 10 + i })),
      );
      const stored = await store.getIncident(incident.incidentId);
      expect(stored?.version).toBe(2);
      for (const r of results) expect(r).toEqual(stored);
    });

    it('close honours expectVersion', async () => {
      await expect(store.closeIncident(incident.incidentId, { outcome: 'failed', result: null, now: 2, expectVersion: 7 })).rejects.toBeInstanceOf(
        VersionConflictError,
      );
      expect((await store.getIncident(incident.incidentId))?.state).toBe('open');
    });

    it('close without expectVersion closes at whatever version; with the right one it closes too', async () => {
      await store.updateIncident(incident.incidentId, { attempt: 1 }, { expectVersion: 1, now: 2 });
      expect(await store.closeIncident(incident.incidentId, { outcome: 'failed', result: null, now: 3 })).toMatchObject({
        state: 'failed',
        result: null,
        version: 3,
      });
      const other = (await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-1', target: {}, reason: 'r', now: 4 })).incident;
      expect(await store.closeIncident(other.incidentId, { outcome: 'blocked', result: 'why', now: 5, expectVersion: 1 })).toMatchObject({
        state: 'blocked',
        version: 2,
      });
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
      // Closed with nothing to do (recovered, withdrawn, removed by another): a state of its own.
      await store.closeIncident(c.incident.incidentId, { outcome: 'closed', result: { reason: 'TARGET_RECOVERED' }, now: 5_000 });
      expect(ids(await store.listIncidents({ state: 'closed' }))).toEqual([c.incident.incidentId]);
      expect(await store.getIncident(c.incident.incidentId)).toMatchObject({ state: 'closed', result: { reason: 'TARGET_RECOVERED' } });
    });

    it('lists show every write at once, on any handle: the functions act on them', async () => {
      const other = await another();
      const updated = await store.updateIncident(incident.incidentId, { memberId: 'a1', attempt: 3 }, { expectVersion: 1, now: 2 });
      for (const filter of [{}, { clusterId: 'c1' }, { state: 'open' as const }, { clusterId: 'c1', state: 'open' as const }]) {
        expect(await other.listIncidents(filter)).toEqual([updated]);
      }
      const closed = await store.closeIncident(incident.incidentId, { outcome: 'blocked', result: 'r', now: 3 });
      expect(await other.listIncidents({ clusterId: 'c1', state: 'open' })).toEqual([]);
      expect(await other.listIncidents({ state: 'open' })).toEqual([]);
      expect(await other.listIncidents({ clusterId: 'c1' })).toEqual([closed]);
      expect(await other.listIncidents({ state: 'blocked' })).toEqual([closed]);
    });

    it('ties in opening time are ordered by incident id', async () => {
      const ids = ['c', 'a', 'b'];
      for (const id of ids)
        await store.openOrJoin({ clusterId: 'c3', targetKey: `memberName=${id}`, target: {}, reason: 'r', now: 5, incidentId: `same-${id}` });
      expect((await store.listIncidents({ clusterId: 'c3' })).map((i) => i.incidentId)).toEqual(['same-a', 'same-b', 'same-c']);
    });

    it('clears the streak and the step lease with null', async () => {
      const set = await store.updateIncident(
        incident.incidentId,
        { leaderUnreachable: { since: 5, term: 7 }, inFlight: { key: 'probe-members@0', until: 9 } },
        { expectVersion: 1, now: 2 },
      );
      expect(set).toMatchObject({ leaderUnreachable: { since: 5, term: 7 }, inFlight: { key: 'probe-members@0', until: 9 } });
      const cleared = await store.updateIncident(incident.incidentId, { leaderUnreachable: null, inFlight: null }, { expectVersion: 2, now: 3 });
      expect(cleared.leaderUnreachable).toBeUndefined();
      expect(cleared.inFlight).toBeUndefined();
      expect(await store.getIncident(incident.incidentId)).toEqual(cleared);
    });

    it('keeps any JSON result as written', async () => {
      const results: unknown[] = [null, 0, 'text', true, [1, 'two', { three: 3 }], { nested: { list: [], empty: {}, n: -1.5 } }];
      let current = incident;
      for (const result of results) {
        current = await store.updateIncident(incident.incidentId, { result }, { expectVersion: current.version, now: 2 });
        expect((await store.getIncident(incident.incidentId))?.result).toEqual(result);
      }
    });
  });

  describe('one open incident per cluster and target', () => {
    it('a later report joins the open incident; another target or cluster opens its own', async () => {
      const again = await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-0', target: { memberName: 'etcd-0' }, reason: 'other', now: 9 });
      expect(again).toEqual({ incident, joined: true });
      const otherTarget = await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-1', target: {}, reason: 'r', now: 9 });
      const otherCluster = await store.openOrJoin({ clusterId: 'c2', targetKey: 'memberName=etcd-0', target: {}, reason: 'r', now: 9 });
      expect([otherTarget.joined, otherCluster.joined]).toEqual([false, false]);
      expect(new Set([incident.incidentId, otherTarget.incident.incidentId, otherCluster.incident.incidentId]).size).toBe(3);
    });

    it('once closed, the next report for that target opens a new incident', async () => {
      await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: null, now: 5 });
      const next = await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-0', target: { memberName: 'etcd-0' }, reason: 'again', now: 6 });
      expect(next.joined).toBe(false);
      expect(next.incident).toMatchObject({ state: 'open', reason: 'again', openedAt: 6, version: 1 });
      expect(next.incident.incidentId).not.toBe(incident.incidentId);
      // Closed through a patch, the same holds.
      await store.updateIncident(next.incident.incidentId, { state: 'blocked' }, { expectVersion: 1, now: 7 });
      const third = await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-0', target: {}, reason: 'r', now: 8 });
      expect(third.joined).toBe(false);
      expect((await store.listIncidents({ clusterId: 'c1', state: 'open' })).map((i) => i.incidentId)).toEqual([third.incident.incidentId]);
    });

    it('a caller-chosen id: a redelivery joins it; another target under that id is refused', async () => {
      const first = await store.openOrJoin({ clusterId: 'c2', targetKey: 'memberName=etcd-5', target: {}, reason: 'r', now: 1, incidentId: 'chosen' });
      expect(first.joined).toBe(false);
      expect(first.incident.incidentId).toBe('chosen');
      expect(await store.openOrJoin({ clusterId: 'c2', targetKey: 'memberName=etcd-5', target: {}, reason: 'r', now: 2, incidentId: 'chosen' })).toEqual({
        incident: first.incident,
        joined: true,
      });
      await expect(
        store.openOrJoin({ clusterId: 'c2', targetKey: 'memberName=etcd-6', target: {}, reason: 'r', now: 3, incidentId: 'chosen' }),
      ).rejects.toThrow('incident chosen belongs to c2/memberName=etcd-5');
      // Another id for a target with an open incident joins that incident.
      const joined = await store.openOrJoin({ clusterId: 'c2', targetKey: 'memberName=etcd-5', target: {}, reason: 'r', now: 4, incidentId: 'other' });
      expect(joined).toEqual({ incident: first.incident, joined: true });
      expect(await store.getIncident('other')).toBeUndefined();
      // A closed incident is still found by its id: the redelivery sees what became of it.
      const closed = await store.closeIncident('chosen', { outcome: 'awaiting-replacement', result: null, now: 5 });
      expect(await store.openOrJoin({ clusterId: 'c2', targetKey: 'memberName=etcd-5', target: {}, reason: 'r', now: 6, incidentId: 'chosen' })).toEqual({
        incident: closed,
        joined: true,
      });
    });

    it('one caller-chosen id for two targets at once: one target gets it, the other caller is told whose it is', async () => {
      const other = await another();
      const results = await Promise.allSettled([
        store.openOrJoin({ clusterId: 'c4', targetKey: 'memberName=a', target: {}, reason: 'r', now: 1, incidentId: 'shared' }),
        other.openOrJoin({ clusterId: 'c4', targetKey: 'memberName=b', target: {}, reason: 'r', now: 1, incidentId: 'shared' }),
      ]);
      const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      const winner = won[0]!.incident.targetKey;
      expect(String(lost[0])).toContain(`incident shared belongs to c4/${winner}`);
      // Nothing of the refused open stays behind: its target opens afresh.
      const loser = winner === 'memberName=a' ? 'memberName=b' : 'memberName=a';
      expect((await store.openOrJoin({ clusterId: 'c4', targetKey: loser, target: {}, reason: 'r', now: 2 })).joined).toBe(false);
      expect((await store.listIncidents({ clusterId: 'c4', state: 'open' })).map((i) => i.targetKey).sort()).toEqual(['memberName=a', 'memberName=b']);
    });

    it(`${RACERS} reports at once, on two handles, make one incident; the rest join it`, async () => {
      const racers = await handles();
      const results = await Promise.all(
        racers.map((s, i) =>
          s.openOrJoin({ clusterId: 'c9', targetKey: 'memberName=etcd-2', target: { memberName: 'etcd-2' }, reason: `r${i}`, now: 100 + i }),
        ),
      );
      expect(results.filter((r) => !r.joined)).toHaveLength(1);
      expect(new Set(results.map((r) => r.incident.incidentId)).size).toBe(1);
      expect(await store.listIncidents({ clusterId: 'c9' })).toHaveLength(1);
    });
  });

  describe('step state on the incident', () => {
    it('keeps the outbox, the steps done and the lease, across handles, and clears them', async () => {
      const event = {
        source: 'etcd-remediator' as const,
        detailType: 'RetryDue' as const,
        detail: { incidentId: incident.incidentId, clusterId: 'c1', attempt: 1, at: '2025-01-01T00:00:00.000Z', reason: 'ELECTION_IN_PROGRESS' as const },
      };
      const written = await store.updateIncident(
        incident.incidentId,
        {
          outbox: [
            { kind: 'publish', event },
            { kind: 'journal', entry: { at: 2, ...sampleLine('probed') } },
          ],
          stepsDone: ['probe-members@0'],
          inFlight: { key: 'move-leader@0', until: 99 },
        },
        { expectVersion: incident.version, now: 2 },
      );
      const other = await another();
      const read = (await other.getIncident(incident.incidentId))!;
      expect(read.outbox).toEqual([
        { kind: 'publish', event },
        { kind: 'journal', entry: { at: 2, ...sampleLine('probed') } },
      ]);
      expect(read.stepsDone).toEqual(['probe-members@0']);
      expect(read.inFlight).toEqual({ key: 'move-leader@0', until: 99 });
      const cleared = await store.updateIncident(incident.incidentId, { outbox: [], inFlight: null }, { expectVersion: written.version, now: 3 });
      expect(cleared.outbox).toEqual([]);
      expect(cleared.inFlight).toBeUndefined();
      expect(cleared.stepsDone).toEqual(['probe-members@0']);
    });

    it('closes through a patch once: a closed incident is never closed again, whatever the version', async () => {
      const closed = await store.updateIncident(
        incident.incidentId,
        { state: 'blocked', result: { reason: 'NO_QUORUM' } },
        { expectVersion: incident.version, now: 2 },
      );
      expect(closed.state).toBe('blocked');
      await expect(
        store.updateIncident(incident.incidentId, { state: 'awaiting-replacement' }, { expectVersion: closed.version, now: 3 }),
      ).rejects.toBeInstanceOf(VersionConflictError);
      // Clearing the outbox of a closed incident is still allowed: its last event may be owed.
      expect((await store.updateIncident(incident.incidentId, { outbox: [] }, { expectVersion: closed.version, now: 3 })).state).toBe('blocked');
    });

    it('an incident awaiting its replacement completes through a patch, once; it ends no other way, and a completed one is final', async () => {
      const awaiting = await store.updateIncident(
        incident.incidentId,
        { state: 'awaiting-replacement', result: 'removed' },
        { expectVersion: incident.version, now: 2 },
      );
      await expect(store.updateIncident(incident.incidentId, { state: 'blocked' }, { expectVersion: awaiting.version, now: 3 })).rejects.toBeInstanceOf(
        VersionConflictError,
      );
      const completed = await store.updateIncident(
        incident.incidentId,
        { state: 'completed', result: 'replaced' },
        { expectVersion: awaiting.version, now: 4 },
      );
      expect(completed).toMatchObject({ state: 'completed', result: 'replaced', updatedAt: 4 });
      await expect(store.updateIncident(incident.incidentId, { state: 'completed' }, { expectVersion: completed.version, now: 5 })).rejects.toBeInstanceOf(
        VersionConflictError,
      );
      expect((await store.listIncidents({ state: 'completed' })).map((i) => i.incidentId)).toEqual([incident.incidentId]);
      expect(await store.listIncidents({ state: 'awaiting-replacement' })).toEqual([]);
    });

    it('closing is one way, by either path: closeIncident after a closing patch changes nothing, a closing patch after closeIncident conflicts', async () => {
      const blocked = await store.updateIncident(incident.incidentId, { state: 'blocked', result: 'first' }, { expectVersion: 1, now: 2 });
      expect(await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: 'second', now: 3 })).toEqual(blocked);
      expect(
        await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: 'second', now: 3, expectVersion: blocked.version }),
      ).toEqual(blocked);
      const other = (await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd-1', target: {}, reason: 'r', now: 4 })).incident;
      const failed = await store.closeIncident(other.incidentId, { outcome: 'failed', result: null, now: 5 });
      const reopen = store.updateIncident(other.incidentId, { state: 'awaiting-replacement' }, { expectVersion: failed.version, now: 6 });
      await expect(reopen).rejects.toBeInstanceOf(VersionConflictError);
      await expect(reopen).rejects.toMatchObject({ expectedVersion: failed.version, actualVersion: failed.version });
      expect(await store.getIncident(other.incidentId)).toEqual(failed);
    });
  });
}
