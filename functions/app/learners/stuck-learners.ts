// Stuck learners, cleaned up for an incident that meets them and by the periodic learner check
// (learner-check.ts). When each learner was first seen is kept once per cluster in the store
// (etcd does not say when a member was added), so every look shares one clock per learner; an
// incident journals its own sightings besides. A learner past stuckLearnerAfterMs is removed
// under the cluster lock (it has no vote: MemberRemove of a learner costs no quorum). Which ones
// is core's (stuck-learner.ts). The cleanup writes no removal record and takes no fleet slot: it
// is not a remediation, and the one-member-down rule and the storm guard never count it. A pause
// holds it, as it holds every step that changes a cluster.
import { makeEvent, type EventEnvelope } from '../../../events/catalogue.ts';
import type { Decision, MemberId } from '../../core/common/index.ts';
import { pauseHolding, takeClusterLockAs } from '../fleet/index.ts';
import { isLine, journalSteps, type JournalEntry } from '../../core/incident/index.ts';
import { learnerGate, learnersIn, sameSightings, stuckLearners, type StuckLearner } from '../../core/learners/index.ts';
import type { ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { Incident, OutboxEntry } from '../../ports/incident-store.ts';
import { type ClusterDeps, type Deps, envelopeOf, iso, journaling, nextTryAt, removeMember } from '../common/index.ts';
import { probeCluster } from '../view/index.ts';

export interface Cleanup {
  /** The view after the cleanup: probed again when a learner was removed. */
  view: ClusterView;
  /** Journal lines (sightings, removals) and LearnerRemoved events, for the step's commit. */
  effects: OutboxEntry[];
  removed: MemberId[];
}

/**
 * When each learner of `view` was first seen: the cluster's record, or `earlier` (an incident's
 * journal) when that is older, or now. Written back, so a learner gone from the view drops out; a
 * view with no member list (etcd not answering) changes nothing.
 */
export async function sightLearners(
  deps: Pick<Deps, 'store' | 'clock'>,
  clusterId: string,
  view: ClusterView,
  earlier: Readonly<Record<MemberId, number>> = {},
): Promise<Record<MemberId, number>> {
  const stored = await deps.store.learnerSightings(clusterId);
  if (view.members.length === 0) return stored;
  const now = deps.clock.now();
  const seen = Object.fromEntries(learnersIn(view).map((id) => [id, Math.min(stored[id] ?? now, earlier[id] ?? now)]));
  // Every look of every incident comes here (a replacement check each 15 s): a write only when the record changes.
  return sameSightings(stored, seen) ? stored : deps.store.saveLearnerSightings(clusterId, seen);
}

/** The cluster's sightings, the incident's own older ones kept, and the journal lines of the learners this incident sees for the first time. */
async function sightings(
  deps: Deps,
  clusterId: string,
  journal: readonly JournalEntry[],
  view: ClusterView,
): Promise<{ firstSeen: Record<MemberId, number>; effects: OutboxEntry[] }> {
  const journaled: Record<MemberId, number> = {};
  for (const e of journal) if (isLine(e, journalSteps.learnerSeen)) journaled[e.detail.memberId] ??= e.at;
  const firstSeen = await sightLearners(deps, clusterId, view, journaled);
  const now = deps.clock.now();
  const effects = learnersIn(view)
    .filter((id) => journaled[id] === undefined)
    .map((id) =>
      journaling(now, { step: journalSteps.learnerSeen, detail: { memberId: id, peerURLs: view.members.find((m) => m.id === id)?.peerUrls ?? [] } }),
    );
  return { firstSeen, effects };
}

/** A learner removed: through which member, and when. */
export interface LearnerRemoval {
  learner: StuckLearner;
  via: string;
  at: number;
}

/** Who removes: the lock's holder (`incident:<id>`, `learner-check:<clusterId>`) and what its log lines carry. */
export interface Remover {
  holder: string;
  logKeys: Record<string, unknown>;
}

/**
 * Removes the `stuck` learners of `view` under the cluster lock. Nothing is removed while the
 * cluster or the fleet is paused, or while another remediation holds the lock: the next look
 * tries again, and the log says why.
 */
export async function removeStuckLearners(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  view: ClusterView,
  stuck: readonly StuckLearner[],
  remover: Remover,
): Promise<LearnerRemoval[]> {
  if (stuck.length === 0) return [];
  const learners = stuck.map((s) => s.member.id);
  const pause = await pauseHolding(deps, cluster, view);
  if (pause) {
    const scope = pause.fleetWide ? 'the fleet' : `cluster ${cluster.clusterId}`;
    deps.log.info('stuck learner left while paused', {
      ...remover.logKeys,
      learners,
      why: `${scope} is paused by ${pause.mark.by} since ${iso(pause.mark.at)} ("${pause.mark.why}")`,
    });
    return [];
  }
  const attempt = await takeClusterLockAs(deps, cluster, remover.holder, view, stuck[0]!.member.id);
  if (!attempt.held) {
    deps.log.info('stuck learner left for the next look: the cluster lock was not ours', {
      ...remover.logKeys,
      learners,
      why: 'busy' in attempt ? attempt.busy : attempt.failure.message,
    });
    return [];
  }
  const removed: LearnerRemoval[] = [];
  try {
    for (const learner of stuck) {
      const outcome = await removeMember(deps, cluster, view, learner.member.id);
      if (outcome.kind !== 'removed') {
        deps.log.warn('stuck learner not removed; tried again on the next look', { ...remover.logKeys, learner: learner.member.id, said: outcome.message });
        continue;
      }
      removed.push({ learner, via: outcome.via, at: deps.clock.now() });
    }
  } finally {
    await attempt.lock.release();
  }
  return removed;
}

/** LearnerRemoved, for an incident's envelope or, from the periodic check, the cluster's alone. */
export const learnerRemovedEvent = (
  envelope: { clusterId: string; at: string; incidentId?: string; attempt?: number },
  removal: LearnerRemoval,
): EventEnvelope<'LearnerRemoved'> =>
  makeEvent('LearnerRemoved', {
    ...envelope,
    learner: { memberId: removal.learner.member.id, name: removal.learner.member.name },
    learnerSince: iso(removal.learner.firstSeen),
    reason: 'STUCK_LEARNER_REMOVED',
    message: removal.learner.message,
    evidence: { ...removal.learner.evidence, via: removal.via },
  });

/**
 * Removes the learners of `view` stuck past the policy's window, for `incident`. `owed` names the
 * member whose replacement the incident still awaits, to say so.
 */
export async function cleanUpStuckLearners(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  incident: Incident,
  view: ClusterView,
  journal: readonly JournalEntry[],
  owed?: string,
): Promise<Cleanup> {
  const seen = await sightings(deps, cluster.clusterId, journal, view);
  return cleanUp(deps, cluster, incident, view, seen, owed);
}

async function cleanUp(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  incident: Incident,
  view: ClusterView,
  seen: { firstSeen: Record<MemberId, number>; effects: OutboxEntry[] },
  owed?: string,
): Promise<Cleanup> {
  const stuck = stuckLearners(view, seen.firstSeen, { now: deps.clock.now(), policy: cluster.policy, ...(owed ? { owed } : {}) });
  const removals = await removeStuckLearners(deps, cluster, view, stuck, {
    holder: `incident:${incident.incidentId}`,
    logKeys: { incidentId: incident.incidentId },
  });
  const effects = [...seen.effects];
  for (const removal of removals) {
    const { learner, via, at } = removal;
    effects.push(journaling(at, { step: journalSteps.learnerRemoved, detail: { memberId: learner.member.id, via, message: learner.message } }), {
      kind: 'publish',
      event: learnerRemovedEvent(envelopeOf(incident, at), removal),
    });
  }
  const removed = removals.map((r) => r.learner.member.id);
  const after = removed.length > 0 ? await probeCluster(deps, cluster, view) : view;
  return { view: after, effects, removed };
}

/**
 * The quorum gate refused the removal for learners alone (core learnerGate): one past its window
 * is removed and the incident looks again at once; one not yet past it is waited for. Any other
 * decision stands as it is, and so does this one when the cleanup could not run (paused, the lock
 * another's): looked at again after the incident's backoff.
 */
export async function learnersBeforeRemoval(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  incident: Incident,
  view: ClusterView,
  decision: Decision,
): Promise<{ decision: Decision; effects: OutboxEntry[] }> {
  if (decision.kind !== 'block' || decision.reason !== 'MEMBER_NOT_READY') return { decision, effects: [] };
  const journal = await deps.store.journal(incident.incidentId);
  const seen = await sightings(deps, cluster.clusterId, journal, view);
  const now = deps.clock.now();
  const gate = learnerGate(decision, view, seen.firstSeen, { now, targetId: incident.memberId, policy: cluster.policy });
  if (!gate) return { decision, effects: [] };
  if (gate.kind === 'wait') return { decision: gate.decision, effects: seen.effects };
  const cleanup = await cleanUp(deps, cluster, incident, view, seen);
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
