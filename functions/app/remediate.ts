// remediate: under the cluster lock, check the gates on a fresh probe, remove the member, wait for
// a leader among the rest, replace the machine. Every step is marked in the journal, so a run
// that crashed part-way resumes after the last step it finished.
import type { DetailOf } from '../../events/catalogue.ts';
import { backoffDelay } from '../core/backoff.ts';
import type { Decision } from '../core/decision.ts';
import { describeMember, memberGone } from '../core/view.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import { withView, type Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';
import { envelopeOf, iso, memberRef, oncePerAttempt, publish } from './incident-events.ts';
import { probeCluster } from './probe-cluster.ts';
import { attemptsSpent, planIncident } from './plan-incident.ts';
import { publishDecision, publishFailure } from './publish-decision.ts';
import { removeMember } from './remove-member.ts';
import { takeSnapshot } from './take-snapshot.ts';
import { waitForNewLeader } from './wait-for-leader.ts';

/** Long enough for a removal and an election; a crashed holder's lease lapses after this. */
export const LOCK_LEASE_MS = 120_000;

export const remediate = (deps: Deps, detail: DetailOf<'RemediationApproved'>): Promise<Decision | 'completed' | 'failed' | undefined> =>
  oncePerAttempt(deps, detail, 'remediate', (incident) => underLock(deps, incident));

async function underLock(deps: Deps, incident: Incident): Promise<Decision | 'completed' | 'failed'> {
  const cluster = await deps.directory.get(incident.clusterId);
  const owner = `incident:${incident.incidentId}`;
  if (!(await deps.store.acquireLock(incident.clusterId, owner, LOCK_LEASE_MS, deps.clock.now()))) {
    const busy = retryAfterBackoff(deps, cluster, incident, 'CLUSTER_LOCKED', (at) => `${nameOf(incident)} waits: another remediation holds the lock of cluster ${incident.clusterId}; we try again at ${at}.`);
    return publishDecision(deps, incident, busy, 'remediate');
  }
  try {
    await mark(deps, incident.incidentId, 'lock-taken', `held by ${owner}`);
    return await runSteps(deps, cluster, incident);
  } finally {
    await deps.store.releaseLock(incident.clusterId, owner);
  }
}

async function runSteps(deps: Deps, cluster: ClusterEntry, incident: Incident): Promise<Decision | 'completed' | 'failed'> {
  const id = incident.incidentId;
  if (!(await deps.store.stepDone(id, 'member-removed'))) {
    const step = await removeStep(deps, cluster, incident);
    incident = step.incident;
    if (step.decision) return publishDecision(deps, incident, step.decision, 'remediate');
  }
  const leader = (await leaderMarked(deps, id)) ?? (await electionStep(deps, cluster, incident));
  if ('kind' in leader) return publishDecision(deps, incident, leader, 'remediate');
  if (!(await deps.store.stepDone(id, 'actuator-called'))) {
    const member = { id: incident.memberId!, name: incident.memberName ?? '' };
    try {
      const result = await deps.actuator.replace({ clusterId: incident.clusterId, incidentId: id, member, target: incident.target });
      await mark(deps, id, 'actuator-called', `${deps.actuator.name}: ${result.detail}`);
    } catch (error) {
      // The member is already out of etcd: say so, and leave the machine to a person.
      const said = error instanceof Error ? error.message : String(error);
      await deps.store.recordRemediation(incident.clusterId, incident.targetKey, deps.clock.now());
      await publishFailure(deps, incident, {
        reason: 'ACTUATOR_FAILED',
        message: `${describeMember(member)} was removed from etcd and ${leader.name || leader.id} leads now, but the ${deps.actuator.name} actuator could not replace its machine (${said}); replace the machine by hand.`,
        evidence: { actuator: deps.actuator.name, error: said, newLeader: leader },
      });
      return 'failed';
    }
  }
  return complete(deps, incident, leader);
}

const nameOf = (incident: Incident): string => describeMember({ id: incident.memberId!, name: incident.memberName ?? '' });

const mark = (deps: Deps, incidentId: string, step: string, detail: string) =>
  deps.store.markStep(incidentId, { at: deps.clock.now(), step, detail });

const retryAfterBackoff = (deps: Deps, cluster: ClusterEntry, incident: Incident, reason: Decision['reason'], message: (at: string) => string, evidence = {}): Decision => {
  const at = deps.clock.now() + backoffDelay(attemptsSpent(incident), cluster.policy, deps.random);
  return { kind: 'retry', at, reprobeNow: false, reason, message: message(iso(at)), evidence };
};

/** Steps 2–4: a fresh probe, the gates again, the snapshot if asked for, and MemberRemove. */
async function removeStep(deps: Deps, cluster: ClusterEntry, incident: Incident): Promise<{ incident: Incident; decision?: Decision }> {
  const id = incident.incidentId;
  // The policy is read afresh on every run: a cluster switched to dry run since approval is not touched.
  if (cluster.policy.dryRun) {
    const decision: Decision = {
      kind: 'block',
      reason: 'DRY_RUN',
      message: `Dry run, nothing done: removing ${nameOf(incident)} was approved, but the policy of cluster ${incident.clusterId} is now a dry run, so nothing is removed; blocked.`,
      evidence: { wouldDo: 'approve' },
    };
    return { incident, decision };
  }
  const fresh = await probeCluster(deps, cluster, incident.views.at(-1));
  incident = await deps.store.updateIncident(id, { views: withView(incident.views, fresh) }, { expectVersion: incident.version, now: deps.clock.now() });
  const name = incident.memberName || incident.memberId!;
  if (memberGone(fresh, incident.memberId!)) {
    // Removed by an earlier run that stopped before it could say so.
    await mark(deps, id, 'member-removed', `${name} is no longer in the member list`);
    return { incident };
  }
  const recheck = recheckGates(deps, cluster, incident);
  if (recheck.kind !== 'approve') return { incident, decision: recheck };

  if (cluster.policy.snapshotBeforeRemove && !(await deps.store.stepDone(id, 'snapshot-taken'))) {
    const snap = await takeSnapshot(deps, cluster, fresh, incident.memberId!, `${id}-before-removing-${name}`);
    if (!snap.ok) {
      const decision = retryAfterBackoff(deps, cluster, incident, 'SNAPSHOT_FAILED', (at) => `No snapshot could be taken before removing ${name} (${snap.problem}); nothing was removed, we try again at ${at}.`);
      return { incident, decision };
    }
    await mark(deps, id, 'snapshot-taken', `${snap.location} (through ${snap.via})`);
  }

  const removed = await removeMember(deps, cluster, fresh, incident.memberId!);
  if (removed.kind === 'removed') {
    await mark(deps, id, 'member-removed', `${removed.alreadyGone ? 'already gone, said' : 'removed through'} ${removed.via}`);
    return { incident };
  }
  const evidence = { failures: removed.failures };
  const decision: Decision =
    removed.kind === 'block'
      ? { kind: 'block', reason: removed.reason, message: removed.message, evidence }
      : retryAfterBackoff(deps, cluster, incident, removed.reason, (at) => `${removed.message}; we try again at ${at}.`, evidence);
  return { incident, decision };
}

/** Step 5: a leader among the rest, or a short retry while the election runs. */
async function electionStep(deps: Deps, cluster: ClusterEntry, incident: Incident): Promise<{ id: string; name: string } | Decision> {
  const id = incident.incidentId;
  const removedAt = (await deps.store.journal(id)).find((e) => e.isStepMarker && e.step === 'member-removed')?.at ?? deps.clock.now();
  const elected = await waitForNewLeader(deps, cluster, incident.memberId!, incident.views.at(-1));
  if (!elected) {
    const at = deps.clock.now() + cluster.policy.electionTimeoutMs;
    const who = nameOf(incident);
    return {
      kind: 'retry',
      at,
      reprobeNow: false,
      reason: 'ELECTION_IN_PROGRESS',
      message: `${who} was removed, but the remaining members agree on no leader yet; we look again at ${iso(at)}.`,
      evidence: {},
    };
  }
  const leader = { id: elected.id, name: elected.name };
  await mark(deps, id, 'leader-elected', JSON.stringify({ ...leader, term: elected.term, afterRemovalMs: deps.clock.now() - removedAt }));
  return leader;
}

function recheckGates(deps: Deps, cluster: ClusterEntry, incident: Incident): Decision {
  // The budget was checked when the removal was approved; this run is that remediation.
  const decision = planIncident(deps, cluster, incident, { retryCount: 0 });
  if (decision.kind !== 'move-leader') return decision;
  // The target leads again (say a follower won an election): go back and move leadership first.
  return { kind: 'retry', at: deps.clock.now(), reprobeNow: true, reason: 'LEADER_CHANGED', message: `${decision.message.replace(/\.$/, '')}; the target leads again since approval, so we re-probe now.`, evidence: decision.evidence };
}

async function leaderMarked(deps: Deps, incidentId: string): Promise<{ id: string; name: string } | undefined> {
  const entry = (await deps.store.journal(incidentId)).find((e) => e.isStepMarker && e.step === 'leader-elected');
  if (!entry || typeof entry.detail !== 'string') return undefined;
  const { id, name } = JSON.parse(entry.detail) as { id: string; name: string };
  return { id, name };
}

async function complete(deps: Deps, incident: Incident, leader: { id: string; name: string }): Promise<'completed'> {
  const now = deps.clock.now();
  const journal = await deps.store.journal(incident.incidentId);
  const timeline = journal.map((e) => ({ at: iso(e.at), step: e.step, detail: typeof e.detail === 'string' ? e.detail : JSON.stringify(e.detail ?? '') }));
  // A move made on an earlier attempt still counts, though a re-approval found a follower.
  const moved = journal.some((e) => e.step === 'leader-moved');
  const leaderMove = moved ? 'moved' : incident.lastDecision?.kind === 'approve' ? incident.lastDecision.leaderMove : 'skipped';
  await deps.store.recordRemediation(incident.clusterId, incident.targetKey, now);
  const detail = { ...envelopeOf(incident, now), target: memberRef(incident), leaderMove, newLeader: leader, timeline };
  await deps.store.closeIncident(incident.incidentId, { outcome: 'remediated', result: detail, now });
  await publish(deps, 'RemediationCompleted', detail);
  return 'completed';
}

