// move-leader: take the incident's decision (decide-incident.ts) and, when it says to move
// leadership first, move it (run-move.ts); publish the outcome: approved, retry, or blocked.
import type { DetailOf } from '../../../events/catalogue.ts';
import type { Decision } from '../../core/common/index.ts';
import { isMoveMadeLine, journalSteps, moveMadeStep, type MoveMade } from '../../core/incident/index.ts';
import { type ClusterView, withView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { Incident, OutboxEntry } from '../../ports/incident-store.ts';
import { decideIncident } from '../plan/index.ts';
import { type ClusterDeps, decisionEffects, type Deps, iso, journaling, publishing, runStep } from '../common/index.ts';
import { checkRemovalPermission } from '../removal/index.ts';
import { runMove, type MoveRun } from './run-move.ts';
import { learnersBeforeRemoval } from '../learners/index.ts';

export const moveLeader = (deps: ClusterDeps, detail: DetailOf<'MembersProbed'>): Promise<Decision | undefined> =>
  runStep(deps, 'move-leader', { detailType: 'MembersProbed', detail }, async (incident, cluster) => {
    const decided = await decideAndMove(deps, cluster, detail, incident);
    const { views, leaderMoved } = decided;
    // Learners alone holding the removal up: a stuck one is cleaned up first, others waited for.
    const { decision, effects: cleanup } = await learnersBeforeRemoval(deps, cluster, incident, detail.view, decided.decision);
    const now = deps.clock.now();
    const { patch, effects } = decisionEffects(incident, decision, 'move-leader', now);
    return {
      incident,
      patch: { ...patch, ...(views ? { views } : {}) },
      // A move made is said before the decision that follows from it.
      effects: [...(leaderMoved ?? []), ...cleanup, ...effects],
      value: decision,
    };
  });

interface Decided {
  decision: Decision;
  /** The views with the one taken to verify a move, when one was taken. */
  views?: ClusterView[];
  leaderMoved?: OutboxEntry[];
}

async function decideAndMove(deps: ClusterDeps, cluster: ClusterEntry, detail: DetailOf<'MembersProbed'>, incident: Incident): Promise<Decided> {
  // Before any move, and for an approval too: etcd must be willing to remove the member.
  const decision = await checkRemovalPermission(deps, cluster, detail.view, incident.memberId, await decideIncident(deps, cluster, incident, detail.view));
  if (decision.kind !== 'move-leader') {
    const unsaid = await moveNeverSaid(deps, incident);
    return unsaid.length > 0 ? { decision, leaderMoved: unsaid } : { decision };
  }
  // Moved on an earlier delivery of this attempt, whose commit failed: etcd now answers "not
  // leader", so deciding again would lose the move. Say what was decided then.
  const made = await moveMade(deps, incident);
  if (made) return made;
  // The view the decision was made on names the leader's endpoints.
  const run = await runMove(deps, cluster, incident, incident.views.at(-1) ?? detail.view, decision);
  const decided: Decided = { decision: run.decision };
  if (run.verifyView) decided.views = withView(incident.views, run.verifyView);
  if (run.decision.kind === 'approve' && run.decision.leaderMove === 'moved') {
    const made: MoveMade = { decision: run.decision, ...(decided.views ? { views: decided.views } : {}) };
    const moved = movedFacts(deps, incident, run);
    if (moved) made.moved = moved;
    decided.leaderMoved = leaderMovedEffects(incident, made);
    // Recorded at once, before the commit that could fail: the move cannot be made twice.
    await deps.store.markStep(incident.incidentId, { at: deps.clock.now(), step: moveMadeStep(incident.attempt), detail: made });
  }
  return decided;
}

async function moveMade(deps: Deps, incident: Incident): Promise<Decided | undefined> {
  const step = moveMadeStep(incident.attempt);
  const entry = (await deps.store.journal(incident.incidentId)).find((e) => e.isStepMarker && isMoveMadeLine(e) && e.step === step);
  if (!entry || !isMoveMadeLine(entry)) return undefined;
  const { decision, views } = entry.detail;
  return { decision, ...(views ? { views } : {}), leaderMoved: leaderMovedEffects(incident, entry.detail) };
}

/**
 * A move made on an earlier attempt whose commit never came (the process died between the marker
 * and the commit): the resumed incident finds a follower and decides afresh, so LeaderMoved would
 * never be said. Its effects were kept with the marker; they go out with this decision, once.
 */
async function moveNeverSaid(deps: Deps, incident: Incident): Promise<OutboxEntry[]> {
  const journal = await deps.store.journal(incident.incidentId);
  if (journal.some((e) => e.step === journalSteps.leaderMoved)) return [];
  const marker = journal.findLast((e) => e.isStepMarker && isMoveMadeLine(e));
  return marker && isMoveMadeLine(marker) ? leaderMovedEffects(incident, marker.detail) : [];
}

/** The move as LeaderMoved says it, at the attempt and time it was made. */
function movedFacts(deps: Deps, incident: Incident, run: MoveRun): MoveMade['moved'] {
  const moved = run.attempts.find((a) => a.outcome === 'moved');
  if (!moved) return undefined;
  return {
    from: incident.memberId!,
    to: moved.candidateId,
    path: moved.path,
    tookMs: Math.round(run.tookMs ?? 0),
    message: run.decision.message,
    attempt: incident.attempt,
    at: deps.clock.now(),
  };
}

function leaderMovedEffects(incident: Incident, made: MoveMade): OutboxEntry[] {
  if (!made.moved) return [];
  const { attempt, at, message, ...move } = made.moved;
  return [
    journaling(at, { step: journalSteps.leaderMoved, detail: { ...move, message } }),
    publishing('LeaderMoved', { incidentId: incident.incidentId, clusterId: incident.clusterId, attempt, at: iso(at), ...move }),
  ];
}
