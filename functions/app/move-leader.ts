// move-leader: decide with the pure planner, move leadership when the leader answers, and publish
// the outcome: approved, retry, or blocked.
import type { DetailOf } from '../../events/catalogue.ts';
import type { Decision } from '../core/decision.ts';
import { describeSelector } from '../core/target.ts';
import { withView, type Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';
import { currentIncident, envelopeOf, publish } from './incident-events.ts';
import { planIncident } from './plan-incident.ts';
import { publishDecision } from './publish-decision.ts';
import { runMove, type MoveRun } from './run-move.ts';

export async function moveLeader(deps: Deps, detail: DetailOf<'MembersProbed'>): Promise<Decision | undefined> {
  let incident = await currentIncident(deps, detail, 'move-leader');
  if (!incident) return undefined;
  // A crash after the member was removed resumes in remediate, not here: the member is gone.
  if (await deps.store.stepDone(incident.incidentId, 'member-removed')) {
    return publishDecision(deps, incident, resumeDecision(incident), 'move-leader');
  }
  const cluster = await deps.directory.get(incident.clusterId);
  const now = deps.clock.now();
  if (!incident.memberId) return publishDecision(deps, incident, targetNotFound(incident, detail), 'move-leader');

  const remediation = await deps.store.remediationHistory(incident.clusterId, incident.targetKey, {
    minHealthyPeriodMs: cluster.policy.minHealthyPeriodMs,
    now,
  });
  let decision = planIncident(deps, cluster, incident, remediation);
  if (cluster.policy.dryRun) return publishDecision(deps, incident, dryRun(decision), 'move-leader');
  if (decision.kind === 'move-leader') {
    const run = await runMove(deps, cluster, incident, detail.view, decision);
    decision = run.decision;
    if (run.verifyView) {
      incident = await deps.store.updateIncident(
        incident.incidentId,
        { views: withView(incident.views, run.verifyView) },
        { expectVersion: incident.version, now: deps.clock.now() },
      );
    }
    if (decision.kind === 'approve' && decision.leaderMove === 'moved') {
      await deps.store.appendJournal(incident.incidentId, { at: deps.clock.now(), step: 'leader-moved', detail: decision.message });
      await publishLeaderMoved(deps, incident, run);
    }
  }
  return publishDecision(deps, incident, decision, 'move-leader');
}

async function publishLeaderMoved(deps: Deps, incident: Incident, run: MoveRun): Promise<void> {
  const moved = run.attempts.find((a) => a.outcome === 'moved');
  if (!moved || run.decision.kind !== 'approve') return;
  await publish(deps, 'LeaderMoved', {
    ...envelopeOf(incident, deps.clock.now()),
    from: incident.memberId!,
    to: moved.candidateId,
    path: moved.path,
    tookMs: Math.round(run.tookMs ?? 0),
  });
}

/** A dry run acts on nothing: what would be done is said, and the incident ends there. */
function dryRun(decision: Decision): Decision {
  if (decision.kind !== 'approve' && decision.kind !== 'move-leader') return decision;
  return { kind: 'block', reason: 'DRY_RUN', message: `Dry run, nothing done: ${decision.message}`, evidence: { ...decision.evidence, wouldDo: decision.kind } };
}

const resumeDecision = (incident: Incident): Decision => ({
  kind: 'approve',
  leaderMove: (incident.lastDecision?.kind === 'approve' && incident.lastDecision.leaderMove) || 'skipped',
  reason: incident.lastDecision?.reason ?? 'LEADER_UNREACHABLE_PAST_GRACE',
  message: `The member of incident ${incident.incidentId} was already removed; remediation resumes where it stopped.`,
  evidence: { resumed: true },
});

function targetNotFound(incident: Incident, detail: DetailOf<'MembersProbed'>): Decision {
  const names = detail.view.members.map((m) => m.name || m.id).join(', ') || 'none answered';
  return {
    kind: 'block',
    reason: detail.view.members.length === 0 ? 'CLUSTER_UNREACHABLE' : 'TARGET_NOT_FOUND',
    message:
      detail.view.members.length === 0
        ? `No member of cluster ${incident.clusterId} answered a member list; blocked, check the endpoints and that etcd is running.`
        : `No etcd member matches ${describeSelector(incident.target)} (members: ${names}); blocked, it may already be removed: check the member list.`,
    evidence: { target: incident.target, members: names },
  };
}
