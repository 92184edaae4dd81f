// move-leader: decide with the pure planner, move leadership when the leader answers, and publish
// the outcome: approved, retry, or blocked.
import type { DetailOf } from '../../events/catalogue.ts';
import type { Decision } from '../core/decision.ts';
import { describeDuration } from '../core/explain.ts';
import { describeSelector } from '../core/target.ts';
import { describeMember, memberGone, type ClusterView } from '../core/view.ts';
import { withView } from '../core/view-history.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import type { Incident, OutboxEntry } from '../ports/incident-store.ts';
import { decisionEffects } from './decision-effects.ts';
import type { Deps } from './deps.ts';
import { envelopeOf, journaling, publishing } from './incident-events.ts';
import { membersUnderRemediation, planIncident } from './plan-incident.ts';
import { runMove, type MoveRun } from './run-move.ts';
import { runStep } from './step.ts';

export const moveLeader = (deps: Deps, detail: DetailOf<'MembersProbed'>): Promise<Decision | undefined> =>
  runStep(deps, 'move-leader', { detailType: 'MembersProbed', detail }, async (incident, cluster) => {
    const { decision, views, leaderMoved } = await decide(deps, cluster, detail, incident);
    const now = deps.clock.now();
    const { patch, effects } = decisionEffects(incident, decision, 'move-leader', now);
    return {
      incident,
      patch: { ...patch, ...(views ? { views } : {}) },
      // A move made is said before the decision that follows from it.
      effects: [...(leaderMoved ?? []), ...effects],
      value: decision,
    };
  });

interface Decided {
  decision: Decision;
  /** The views with the one taken to verify a move, when one was taken. */
  views?: ClusterView[];
  leaderMoved?: OutboxEntry[];
}

async function decide(deps: Deps, cluster: ClusterEntry, detail: DetailOf<'MembersProbed'>, incident: Incident): Promise<Decided> {
  // A crash after the member was removed resumes in remediate, not here: the member is gone.
  if (await removalUnderWay(deps, incident, detail.view)) return { decision: resumeDecision(deps, cluster, incident) };
  const now = deps.clock.now();
  // No member list answered: the planner retries (or names the credential) rather than block.
  if (!incident.memberId && detail.view.members.length > 0) return { decision: targetNotFound(incident, detail.view) };

  const remediation = await deps.store.remediationHistory(incident.clusterId, incident.targetKey, {
    minHealthyPeriodMs: cluster.policy.minHealthyPeriodMs,
    now,
  });
  const decision = planIncident(deps, cluster, incident, remediation, await membersUnderRemediation(deps, incident));
  if (cluster.policy.dryRun) return { decision: dryRun(decision) };
  if (decision.kind !== 'move-leader') return { decision };
  // Moved on an earlier delivery of this attempt, whose commit failed: etcd now answers "not
  // leader", so deciding again would lose the move. Say what was decided then.
  const made = await moveMade(deps, incident);
  if (made) return made;
  // The view the decision was made on names the leader's endpoints.
  const run = await runMove(deps, cluster, incident, incident.views.at(-1) ?? detail.view, decision);
  const decided: Decided = { decision: run.decision };
  if (run.verifyView) decided.views = withView(incident.views, run.verifyView);
  if (run.decision.kind === 'approve' && run.decision.leaderMove === 'moved') {
    decided.leaderMoved = leaderMovedEffects(deps, incident, run);
    // Recorded at once, before the commit that could fail: the move cannot be made twice.
    await deps.store.markStep(incident.incidentId, { at: deps.clock.now(), step: moveMarker(incident), detail: JSON.stringify(decided) });
  }
  return decided;
}

const moveMarker = (incident: Incident): string => `leader-move-made@${incident.attempt}`;

async function moveMade(deps: Deps, incident: Incident): Promise<Decided | undefined> {
  const step = moveMarker(incident);
  const entry = (await deps.store.journal(incident.incidentId)).find((e) => e.isStepMarker && e.step === step);
  return entry && typeof entry.detail === 'string' ? (JSON.parse(entry.detail) as Decided) : undefined;
}

function leaderMovedEffects(deps: Deps, incident: Incident, run: MoveRun): OutboxEntry[] {
  const moved = run.attempts.find((a) => a.outcome === 'moved');
  if (!moved) return [];
  const now = deps.clock.now();
  return [
    journaling(now, 'leader-moved', run.decision.message),
    publishing('LeaderMoved', {
      ...envelopeOf(incident, now),
      from: incident.memberId!,
      to: moved.candidateId,
      path: moved.path,
      tookMs: Math.round(run.tookMs ?? 0),
    }),
  ];
}

/**
 * The member is out: marked removed, or gone from the member list once remediate had begun (a
 * crash between MemberRemove and its marker). Either way the rest of remediation must still run.
 */
async function removalUnderWay(deps: Deps, incident: Incident, view: ClusterView): Promise<boolean> {
  if (await deps.store.stepDone(incident.incidentId, 'member-removed')) return true;
  const gone = !!incident.memberId && memberGone(view, incident.memberId);
  return gone && (await deps.store.stepDone(incident.incidentId, 'lock-taken'));
}

/** A dry run acts on nothing: what would be done is said, and the incident ends there. */
function dryRun(decision: Decision): Decision {
  if (decision.kind !== 'approve' && decision.kind !== 'move-leader') return decision;
  return { kind: 'block', reason: 'DRY_RUN', message: `Dry run, nothing done: ${decision.message}`, evidence: { ...decision.evidence, wouldDo: decision.kind } };
}

/** Resuming skips the planner, so the incident deadline is checked here: an election that never ends must not loop. */
function resumeDecision(deps: Deps, cluster: ClusterEntry, incident: Incident): Decision {
  const who = describeMember({ id: incident.memberId ?? incident.targetKey, name: incident.memberName ?? '' });
  const last = incident.lastDecision;
  const age = deps.clock.now() - incident.openedAt;
  const evidence = { resumed: true, ...(last ? { lastReason: last.reason } : {}) };
  if (age >= cluster.policy.incidentDeadlineMs) {
    return {
      kind: 'block',
      reason: 'INCIDENT_DEADLINE_EXCEEDED',
      message: `${who} is out of the member list, but remediation has not finished within the incident deadline of ${describeDuration(cluster.policy.incidentDeadlineMs)}${last ? ` (last: ${last.message.replace(/\.$/, '')})` : ''}; blocked, check that the remaining members have a leader and replace the machine by hand.`,
      evidence,
    };
  }
  return {
    kind: 'approve',
    leaderMove: (last?.kind === 'approve' && last.leaderMove) || 'skipped',
    reason: last?.kind === 'approve' ? last.reason : 'RUNTIME_RESUMED',
    message: `${who} is already out of the member list; remediation resumes where it stopped: wait for a leader among the rest, then replace the machine.`,
    evidence,
  };
}

function targetNotFound(incident: Incident, view: ClusterView): Decision {
  const names = view.members.map((m) => m.name || m.id).join(', ');
  return {
    kind: 'block',
    reason: 'TARGET_NOT_FOUND',
    message: `No etcd member matches ${describeSelector(incident.target)} (members: ${names}); blocked, it may already be removed: check the member list.`,
    evidence: { target: incident.target, members: names },
  };
}
