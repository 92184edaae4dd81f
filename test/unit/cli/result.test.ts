// The result of a completed incident names the approval that led to the removal, not whatever
// was decided last, and never a reason nobody decided.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeEvent } from '../../../events/catalogue.ts';
import type { Decision, LeaderMove } from '../../../functions/core/common/decision.ts';
import type { DecisionLine } from '../../../functions/core/incident/journal.ts';
import { resultOf } from '../../../infra/cli/result.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { tempDir, type TempDir } from '../runtime/helpers.ts';

describe('the result of a completed incident', () => {
  let dir: TempDir;
  let store: SqliteIncidentStore;

  beforeEach(() => {
    dir = tempDir();
    store = openSqliteStore({ path: dir.file('state.sqlite') });
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  /** An incident for member a1 (etcd1), with `journal` lines written as decisionEffects writes them. */
  const completed = async (journal: DecisionLine[], lastDecision?: Decision, leaderMove: LeaderMove = 'skipped') => {
    const { incident } = await store.openOrJoin({ clusterId: 'c1', targetKey: 'memberName=etcd1', target: { memberName: 'etcd1' }, reason: 'r', now: 1_000 });
    let at = 1_000;
    for (const entry of journal) await store.appendJournal(incident.incidentId, { at: (at += 100), ...entry });
    await store.updateIncident(
      incident.incidentId,
      { memberId: 'a1', memberName: 'etcd1', ...(lastDecision ? { lastDecision } : {}) },
      { expectVersion: incident.version, now: at },
    );
    const event = makeEvent('RemediationCompleted', {
      incidentId: incident.incidentId,
      clusterId: 'c1',
      attempt: 1,
      at: new Date(at).toISOString(),
      target: { memberId: 'a1', name: 'etcd1' },
      leaderMove,
      newLeader: { id: 'b2', name: 'etcd2' },
      timeline: [],
    });
    return resultOf(store, event);
  };

  const retry: Decision = {
    kind: 'retry',
    at: 5_000,
    reprobeNow: false,
    reason: 'ELECTION_IN_PROGRESS',
    message: 'etcd1 was removed, but no leader yet.',
    evidence: {},
  };

  it('reports the approval that led to the removal when a retry was decided after it', async () => {
    const result = await completed(
      [
        { step: 'move-leader:retry', detail: { reason: 'LEADER_UNREACHABLE', message: 'etcd1 is unreachable; we wait.' } },
        { step: 'move-leader:approve', detail: { reason: 'LEADER_UNREACHABLE_PAST_GRACE', message: 'etcd1 stayed unreachable past the grace window.' } },
        { step: 'remediate:retry', detail: { reason: 'ELECTION_IN_PROGRESS', message: 'etcd1 was removed, but no leader yet.' } },
      ],
      retry,
    );
    expect(result).toMatchObject({ outcome: 'awaiting-replacement', reason: 'LEADER_UNREACHABLE_PAST_GRACE' });
  });

  it('reports the first approval, not the resume that carried the incident past a restart', async () => {
    const result = await completed([
      { step: 'move-leader:approve', detail: { reason: 'TARGET_IS_FOLLOWER', message: 'etcd1 is a follower.' } },
      { step: 'remediate:retry', detail: { reason: 'ELECTION_IN_PROGRESS', message: 'etcd1 was removed, but no leader yet.' } },
      { step: 'move-leader:approve', detail: { reason: 'RUNTIME_RESUMED', message: 'etcd1 is already out of the member list; remediation resumes.' } },
    ]);
    expect(result.reason).toBe('TARGET_IS_FOLLOWER');
  });

  it('reports the last decision when it is the approval', async () => {
    const approve: Decision = { kind: 'approve', leaderMove: 'moved', reason: 'LEADER_MOVED', message: 'Leadership moved off etcd1.', evidence: {} };
    expect((await completed([], approve)).reason).toBe('LEADER_MOVED');
  });

  it('says a removed learner was removed as a learner, not as a follower', async () => {
    const learner: Decision = { kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_LEARNER', message: 'etcd1 is a learner.', evidence: {} };
    const result = await completed([], learner, 'not-needed');
    expect(result.message).toBe(
      'etcd1 (a1) was removed from cluster c1 as a learner, which neither leads nor votes, so no leader move was needed; etcd2 (b2) leads now.',
    );
  });

  it('says a removed follower was removed as a follower', async () => {
    const follower: Decision = { kind: 'approve', leaderMove: 'not-needed', reason: 'TARGET_IS_FOLLOWER', message: 'etcd1 is a follower.', evidence: {} };
    const result = await completed([], follower, 'not-needed');
    expect(result.message).toBe('etcd1 (a1) was removed from cluster c1 as a follower, with no leader move needed; etcd2 (b2) leads now.');
  });

  it('with no approval recorded, says it was remediated rather than invent why', async () => {
    expect((await completed([])).reason).toBe('REMEDIATED');
    expect((await completed([], retry)).reason).toBe('REMEDIATED');
  });
});
