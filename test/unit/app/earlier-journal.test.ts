// A state file an earlier build wrote, whose journal lines are text ("REASON: message", the
// election and the move marker as JSON text), still resumes: the steps read the facts they need
// from those lines (the leader elected, the approval, the move made) and remove nothing twice.
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { moveLeader } from '../../../functions/app/move-leader.ts';
import { probeMembers } from '../../../functions/app/probe-members.ts';
import { remediate } from '../../../functions/app/remediate.ts';
import { resultOf } from '../../../infra/local/cli/result.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { id, sample, type MemberSpec } from '../core/fixtures.ts';
import { tempDir, type TempDir } from '../local/helpers.ts';
import { harness, unhealthy, type Harness } from './harness.ts';

let h: Harness | undefined;
let dir: TempDir | undefined;
let store: SqliteIncidentStore | undefined;
afterEach(async () => {
  await store?.close();
  await h?.close();
  dir?.remove();
});

const three = (leader: number): MemberSpec[] => [0, 1, 2].map((i) => ({ i, leader }));

/** The harness on a state file of its own, which the test also writes as an earlier build did. */
function onStateFile(): { h: Harness; file: string } {
  h = harness();
  dir = tempDir();
  const file = dir.file('earlier.sqlite');
  store = openSqliteStore({ path: file });
  h.deps.store = store;
  return { h, file };
}

/** Replaces the incident's journal with lines as an earlier build wrote them: each detail JSON of its text. */
function writeEarlierJournal(file: string, incidentId: string, lines: { at: number; step: string; text: string; marker?: boolean }[]): void {
  const db = new DatabaseSync(file);
  try {
    db.prepare('DELETE FROM journal WHERE incident_id = ?').run(incidentId);
    const insert = db.prepare('INSERT INTO journal (incident_id, at, step, detail, is_step_marker) VALUES (?, ?, ?, ?, ?)');
    for (const line of lines) insert.run(incidentId, line.at, line.step, JSON.stringify(line.text), line.marker ? 1 : 0);
  } finally {
    db.close();
  }
}

describe('a state file from an earlier build', () => {
  it('resumes a removal after the election: the leader its text names, no second MemberRemove, the approval its text names', async () => {
    const { h, file } = onStateFile();
    h.setSample((at) => sample(at, three(0)));
    const opened = await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-1') });
    if (opened.kind !== 'probed') throw new Error(`expected a probe, got ${opened.kind}`);
    expect(await moveLeader(h.deps, h.lastOf('MembersProbed'))).toMatchObject({ kind: 'approve', reason: 'TARGET_IS_FOLLOWER' });
    const approved = h.lastOf('RemediationApproved');
    const { incidentId } = opened.incident;
    // The earlier build removed etcd-1, saw etcd-2 elected, and died before the actuator; its last
    // decision on record is the election's retry, so the approval is known from the journal only.
    writeEarlierJournal(file, incidentId, [
      { at: 1, step: 'incident-opened', text: 'test reported memberName=etcd-1: test (observed 2025-06-01T12:00:00.000Z)' },
      { at: 2, step: 'probed', text: '3 of 3 members answered; leader agreed (etcd-0)' },
      { at: 3, step: 'move-leader:approve', text: 'TARGET_IS_FOLLOWER: etcd-1 is a follower: removal is approved without a leader move.' },
      { at: 4, step: 'lock-taken', text: 'held by earlier in etcd', marker: true },
      { at: 5, step: 'member-removed', text: `removed through etcd-0 (${id(0)}) over direct http://127.0.0.1:4001`, marker: true },
      { at: 6, step: 'remediate:retry', text: 'ELECTION_IN_PROGRESS: etcd-1 was removed, but the remaining members agree on no leader yet.' },
      { at: 7, step: 'leader-elected', text: JSON.stringify({ id: id(2), name: 'etcd-2', term: 7, afterRemovalMs: 930 }), marker: true },
    ]);
    const current = (await store!.getIncident(incidentId))!;
    await store!.updateIncident(
      incidentId,
      { lastDecision: { kind: 'retry', at: 6, reprobeNow: false, reason: 'ELECTION_IN_PROGRESS', message: 'no leader yet', evidence: {} } },
      { expectVersion: current.version, now: h.clock.now() },
    );
    // etcd-0 leads in what the probe sees now: only the journal's election names etcd-2.
    h.setSample((at) =>
      sample(at, [
        { i: 0, leader: 0 },
        { i: 2, leader: 0 },
      ]),
    );

    expect(await remediate(h.deps, approved)).toBe('completed');

    expect(h.calls.memberRemove).toEqual([]);
    const completed = h.lastOf('RemediationCompleted');
    expect(completed.newLeader).toEqual({ id: id(2), name: 'etcd-2' });
    expect(completed.leaderMove).toBe('not-needed');
    expect(completed.timeline.find((e) => e.step === 'member-removed')?.detail).toBe(`removed through etcd-0 (${id(0)}) over direct http://127.0.0.1:4001`);
    expect(completed.timeline.find((e) => e.step === 'leader-elected')?.detail).toBe(`etcd-2 (${id(2)}) leads at term 7, 930 ms after the removal`);
    const result = await resultOf(store!, { source: 'etcd-remediator', detailType: 'RemediationCompleted', detail: completed });
    expect(result).toMatchObject({ outcome: 'awaiting-replacement', reason: 'TARGET_IS_FOLLOWER', leaderMove: 'not-needed' });
    expect(result.message).toMatch(/; etcd-2 \(\w+\) leads now at term 7, 930ms after the removal\.$/);
  });

  it('says a move its marker (JSON text) records but whose commit never came, once, as it was made', async () => {
    const { h, file } = onStateFile();
    h.setSample((at) => sample(at, three(0)));
    const opened = await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-0') });
    if (opened.kind !== 'probed') throw new Error(`expected a probe, got ${opened.kind}`);
    const { incidentId } = opened.incident;
    const probed = h.lastOf('MembersProbed');
    // The earlier build moved leadership to etcd-1 over the exec relay, marked it, and died before its commit.
    const decision = { kind: 'approve', leaderMove: 'moved', reason: 'LEADER_MOVED', message: 'Leadership moved from etcd-0 to etcd-1.', evidence: {} };
    const movedAt = '2025-06-01T12:00:00.010Z';
    const leaderMoved = [
      { kind: 'journal', entry: { at: Date.parse(movedAt), step: 'leader-moved', detail: decision.message } },
      {
        kind: 'publish',
        event: {
          source: 'etcd-remediator',
          detailType: 'LeaderMoved',
          detail: { incidentId, clusterId: 'c1', attempt: 0, at: movedAt, from: id(0), to: id(1), path: 'exec', tookMs: 54 },
        },
      },
    ];
    writeEarlierJournal(file, incidentId, [
      { at: 1, step: 'incident-opened', text: 'test reported memberName=etcd-0: test (observed 2025-06-01T12:00:00.000Z)' },
      { at: 10, step: 'leader-move-made@0', text: JSON.stringify({ decision, leaderMoved }), marker: true },
    ]);
    h.setSample((at) => sample(at, three(1)));

    // The same attempt, delivered again: the move is not made twice, and what was decided then stands.
    expect(await moveLeader(h.deps, probed)).toMatchObject({ kind: 'approve', reason: 'LEADER_MOVED', leaderMove: 'moved' });

    expect(h.calls.moveLeader).toEqual([]);
    // The earlier build's `exec` is said, and journaled, under the path's name today.
    expect(h.events.filter((e) => e.detailType === 'LeaderMoved').map((e) => e.detail)).toEqual([
      { incidentId, clusterId: 'c1', attempt: 0, at: movedAt, from: id(0), to: id(1), path: 'exec-relay', tookMs: 54 },
    ]);
    const moved = (await store!.journal(incidentId)).filter((e) => e.step === 'leader-moved');
    expect(moved).toEqual([
      {
        at: Date.parse(movedAt),
        step: 'leader-moved',
        detail: { from: id(0), to: id(1), path: 'exec-relay', tookMs: 54, message: decision.message },
        isStepMarker: false,
      },
    ]);
  });
});
