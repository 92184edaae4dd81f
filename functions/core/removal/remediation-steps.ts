// remediate's decisions between its calls, pure: the app gathers what the lock, the fresh probe,
// the election and the actuator said, and these say what it means. The removal's own are in
// member-removal.ts, the guard's in guard-failure.ts, the snapshot's in snapshot-steps.ts.
import { type Decision, type Evidence, decidedBy } from '../common/index.ts';
import { describeTime, describeMember } from '../view/index.ts';
import { describeResampleWait, resampleAt, WAITS_IN_A_ROW, type ResampleFacts, type WaitPolicy, retryAfterBackoff } from '../waits/index.ts';

/**
 * CLUSTER_LOCKED: another remediation holds the cluster lock (or took it when ours lapsed); a wait,
 * nothing removed. It spends no attempt, so its backoff does not grow, and need not: the holder
 * keeps the lock only while its remediate step runs, and one that dies loses it a lease later.
 */
export const clusterLocked = (who: string, clusterId: string, why: string, retryAt: number): Decision =>
  decidedBy(
    retryAfterBackoff('CLUSTER_LOCKED', retryAt, (when) => `${who} waits: in cluster ${clusterId}, ${why}; nothing was removed, we try again at ${when}.`, {}),
    'cluster-lock',
  );

/**
 * The gates again under the lock, on a fresh probe. The budget was checked at approval, so the
 * planner's verdict stands, but for one: wanting a move means the target leads again since
 * approval (a follower won an election), so leadership is moved first: LEADER_CHANGED, re-probe now.
 */
export function gatesUnderLock(verdict: Decision, now: number): Decision {
  if (verdict.kind !== 'move-leader') return verdict;
  return decidedBy(
    {
      kind: 'retry',
      at: now,
      reprobeNow: true,
      reason: 'LEADER_CHANGED',
      message: `${verdict.message.replace(/\.$/, '')}; the target leads again since approval, so we re-probe now.`,
      evidence: verdict.evidence,
    },
    'leads-again',
  );
}

/**
 * ELECTION_IN_PROGRESS after the removal: no leader among the rest yet, so look again as the
 * planner's resample waits do, longer each look in a row (the resume between two looks passes the
 * row on), never past the incident deadline, where the resume blocks.
 */
export const noLeaderAfterRemoval = (who: string, facts: Omit<ResampleFacts, 'graceFrom'>, policy: WaitPolicy): Decision => {
  const at = resampleAt(facts, policy);
  const after = describeResampleWait(facts.before, facts.now, at, policy);
  return decidedBy(
    {
      kind: 'retry',
      at,
      reprobeNow: false,
      reason: 'ELECTION_IN_PROGRESS',
      message: `${who} was removed, but the remaining members agree on no leader yet; we look again after ${after}, at ${describeTime(at)}.`,
      evidence: { [WAITS_IN_A_ROW]: facts.before + 1 },
    },
    'leader-after-removal',
  );
};

/** How a remediation ends failed: the member is out of etcd, but a later step failed for good. */
export interface RemediationFailure {
  reason: 'ACTUATOR_FAILED';
  message: string;
  evidence: Evidence;
}

type Member = { id: string; name: string };

/** ACTUATOR_FAILED: the member is out and a leader stands, but its machine was not replaced; a person must. */
export const actuatorFailed = (member: Member, leader: Member, actuator: string, error: string): RemediationFailure =>
  decidedBy(
    {
      reason: 'ACTUATOR_FAILED',
      message: `${describeMember(member)} is out of etcd and ${leader.name || leader.id} leads now, but the ${actuator} actuator could not replace its machine (${error}); replace the machine by hand.`,
      evidence: { actuator, error, newLeader: leader },
    },
    'actuator',
  );
