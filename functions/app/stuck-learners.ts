// Stuck learners, cleaned up for an incident that meets them: each learner's first sighting is kept
// in the incident's journal (etcd does not say when a member was added), and one past
// stuckLearnerAfterMs is removed under the cluster lock (it has no vote: MemberRemove of a learner
// costs no quorum). Which ones is core's (stuck-learner.ts). The cleanup writes no removal record
// and takes no fleet slot: it is not a remediation, and the one-member-down rule and the storm
// guard never count it. A pause holds it, as it holds every step that changes a cluster.
import type { Decision } from '../core/decision.ts';
import { pauseOf } from '../core/fleet-gate.ts';
import { isLine, journalSteps, type JournalEntry } from '../core/journal.ts';
import { learnerGate, learnersIn, stuckLearners } from '../core/stuck-learner.ts';
import type { MemberId } from '../core/types.ts';
import type { ClusterView } from '../core/view.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import type { Incident, OutboxEntry } from '../ports/incident-store.ts';
import { takeClusterLock } from './cluster-lock.ts';
import type { Deps } from './deps.ts';
import { envelopeOf, iso, journaling, publishing } from './incident-events.ts';
import { nextTryAt } from './plan-incident.ts';
import { probeCluster } from './probe-cluster.ts';
import { removeMember } from './remove-member.ts';

export interface Cleanup {
  /** The view after the cleanup: probed again when a learner was removed. */
  view: ClusterView;
  /** Journal lines (sightings, removals) and LearnerRemoved events, for the step's commit. */
  effects: OutboxEntry[];
  removed: MemberId[];
}

/** When each learner was first seen by this incident, and the lines that record the ones seen now for the first time. */
function sightings(journal: readonly JournalEntry[], view: ClusterView, now: number): { firstSeen: Record<MemberId, number>; effects: OutboxEntry[] } {
  const firstSeen: Record<MemberId, number> = {};
  for (const e of journal) if (isLine(e, journalSteps.learnerSeen)) firstSeen[e.detail.memberId] ??= e.at;
  const effects: OutboxEntry[] = [];
  for (const id of learnersIn(view)) {
    if (firstSeen[id] !== undefined) continue;
    firstSeen[id] = now;
    const peerURLs = view.members.find((m) => m.id === id)?.peerUrls ?? [];
    effects.push(journaling(now, { step: journalSteps.learnerSeen, detail: { memberId: id, peerURLs } }));
  }
  return { firstSeen, effects };
}

/**
 * Removes the learners of `view` stuck past the policy's window, for `incident`. `owed` names the
 * member whose replacement the incident still awaits, to say so. Nothing is removed while the
 * cluster or the fleet is paused, or while another remediation holds the lock: the next look tries again.
 */
export async function cleanUpStuckLearners(deps: Deps, cluster: ClusterEntry, incident: Incident, view: ClusterView, journal: readonly JournalEntry[], owed?: string): Promise<Cleanup> {
  const now = deps.clock.now();
  const seen = sightings(journal, view, now);
  const stuck = stuckLearners(view, seen.firstSeen, { now, policy: cluster.policy, ...(owed ? { owed } : {}) });
  const nothing: Cleanup = { view, effects: seen.effects, removed: [] };
  if (stuck.length === 0) return nothing;
  if (pauseOf(await deps.store.fleetPauses(), cluster.clusterId)) {
    deps.log.info('stuck learner left while paused', { incidentId: incident.incidentId, learners: stuck.map((s) => s.member.id) });
    return nothing;
  }
  const attempt = await takeClusterLock(deps, cluster, incident.incidentId, view, stuck[0]!.member.id);
  if (!attempt.held) {
    deps.log.info('stuck learner left for the next look: the cluster lock was not ours', { incidentId: incident.incidentId, why: 'busy' in attempt ? attempt.busy : attempt.failure.message });
    return nothing;
  }
  const effects = [...seen.effects];
  const removed: MemberId[] = [];
  try {
    for (const learner of stuck) {
      const outcome = await removeMember(deps, cluster, view, learner.member.id);
      if (outcome.kind !== 'removed') {
        deps.log.warn('stuck learner not removed; tried again on the next look', { incidentId: incident.incidentId, learner: learner.member.id, said: outcome.message });
        continue;
      }
      removed.push(learner.member.id);
      const at = deps.clock.now();
      effects.push(
        journaling(at, { step: journalSteps.learnerRemoved, detail: { memberId: learner.member.id, via: outcome.via, message: learner.message } }),
        publishing('LearnerRemoved', {
          ...envelopeOf(incident, at),
          learner: { memberId: learner.member.id, name: learner.member.name },
          learnerSince: iso(learner.firstSeen),
          reason: 'STUCK_LEARNER_REMOVED',
          message: learner.message,
          evidence: { ...learner.evidence, via: outcome.via },
        }),
      );
    }
  } finally {
    await attempt.lock.release();
  }
  const after = removed.length > 0 ? await probeCluster(deps, cluster, view) : view;
  return { view: after, effects, removed };
}

/**
 * The quorum gate refused the removal for learners alone (core learnerGate): one past its window
 * is removed and the incident looks again at once; one not yet past it is waited for. Any other
 * decision stands as it is, and so does this one when the cleanup could not run (paused, the lock
 * another's): looked at again after the incident's backoff.
 */
export async function learnersBeforeRemoval(deps: Deps, cluster: ClusterEntry, incident: Incident, view: ClusterView, decision: Decision): Promise<{ decision: Decision; effects: OutboxEntry[] }> {
  if (decision.kind !== 'block' || decision.reason !== 'MEMBER_NOT_READY') return { decision, effects: [] };
  const journal = await deps.store.journal(incident.incidentId);
  const now = deps.clock.now();
  const seen = sightings(journal, view, now);
  const gate = learnerGate(decision, view, seen.firstSeen, { now, targetId: incident.memberId, policy: cluster.policy });
  if (!gate) return { decision, effects: [] };
  if (gate.kind === 'wait') return { decision: gate.decision, effects: seen.effects };
  const cleanup = await cleanUpStuckLearners(deps, cluster, incident, view, journal);
  const removed = gate.stuck.filter((s) => cleanup.removed.includes(s.member.id));
  if (removed.length === 0) {
    const at = nextTryAt(deps, cluster, incident);
    const message = `${decision.message} A learner is past stuckLearnerAfterMs, but it could not be removed now (paused, or the cluster lock is another's); we look again at ${iso(at)}.`;
    return { decision: { kind: 'retry', reason: 'LEARNER_PENDING', at, reprobeNow: false, message, evidence: decision.evidence }, effects: cleanup.effects };
  }
  const message = `${removed.map((s) => s.message).join(' ')} The removal it held up goes on: the cluster is probed again now.`;
  return {
    decision: { kind: 'retry', reason: 'STUCK_LEARNER_REMOVED', at: now, reprobeNow: true, message, evidence: { removed: removed.map((s) => s.member.id) } },
    effects: cleanup.effects,
  };
}
