// probe-members: open (or join) the incident, probe every member on its own, publish the view.
import type { DetailOf } from '../../events/catalogue.ts';
import { judgeLeader, streakOf } from '../core/evidence.ts';
import { resolveTarget } from '../core/target.ts';
import { selectorOf, targetKeyOf, withView, type Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';
import { claimed, currentIncident, envelopeOf, iso, publish, resolvedTarget } from './incident-events.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import { probeCluster } from './probe-cluster.ts';

type Input = { detailType: 'MemberUnhealthy'; detail: DetailOf<'MemberUnhealthy'> } | { detailType: 'RetryDue'; detail: DetailOf<'RetryDue'> };

export type ProbeOutcome = { kind: 'probed'; incident: Incident } | { kind: 'joined' | 'stale'; incidentId: string };

export async function probeMembers(deps: Deps, input: Input): Promise<ProbeOutcome> {
  const now = deps.clock.now();
  // Looked up first: an unknown cluster must fail the event, not leave an open incident that every
  // later report for the same target would join and nothing would ever probe.
  const cluster = await deps.directory.get(input.detail.clusterId);
  let incident: Incident | undefined;
  if (input.detailType === 'MemberUnhealthy') {
    const { detail } = input;
    const target = selectorOf(detail.target);
    const opened = await deps.store.openOrJoin({
      clusterId: detail.clusterId,
      targetKey: targetKeyOf(target),
      target,
      reason: detail.reason,
      now,
      ...(detail.incidentId ? { incidentId: detail.incidentId } : {}),
    });
    if (opened.joined) {
      // A duplicate report joins the open incident; the pipeline already under way carries on.
      await deps.store.appendJournal(opened.incident.incidentId, {
        at: now,
        step: 'duplicate-joined',
        detail: `${detail.source}: ${detail.reason}`,
      });
      return { kind: 'joined', incidentId: opened.incident.incidentId };
    }
    incident = opened.incident;
    await deps.store.appendJournal(incident.incidentId, {
      at: now,
      step: 'incident-opened',
      detail: `${detail.source} reported ${targetKeyOf(target)}: ${detail.reason} (observed ${detail.observedAt})`,
    });
  } else {
    incident = await currentIncident(deps, input.detail, 'probe-members');
    if (!incident) return { kind: 'stale', incidentId: input.detail.incidentId };
  }
  const open = incident;
  const probed = await claimed(deps, open, 'probe-members', () => probeAndPublish(deps, cluster, open, now));
  return probed ?? { kind: 'stale', incidentId: open.incidentId };
}

async function probeAndPublish(deps: Deps, cluster: ClusterEntry, incident: Incident, now: number): Promise<ProbeOutcome> {
  const view = await probeCluster(deps, cluster, incident.views.at(-1));
  const member = resolveTarget(view, incident.target, cluster.aliases, incident.memberId);
  const views = withView(incident.views, view);
  const streak = member
    ? streakOf(judgeLeader(views, member.id, cluster.policy.electionTimeoutMs, incident.leaderUnreachable))
    : undefined;
  const updated = await deps.store.updateIncident(
    incident.incidentId,
    {
      views,
      leaderUnreachable: streak ?? null,
      ...(member ? { memberId: member.id, memberName: member.name } : {}),
    },
    { expectVersion: incident.version, now },
  );
  const reachable = view.members.filter((m) => m.reachable).length;
  await deps.store.appendJournal(updated.incidentId, {
    at: now,
    step: 'probed',
    detail: `${reachable} of ${view.members.length} members answered; leader ${view.leader.consensus}${view.leader.name ? ` (${view.leader.name})` : ''}`,
  });
  await publish(deps, 'MembersProbed', {
    ...envelopeOf(updated, now),
    target: resolvedTarget(updated),
    view,
    previousViews: incident.views,
  });
  deps.log.info('probed', { incidentId: updated.incidentId, attempt: updated.attempt, at: iso(now) });
  return { kind: 'probed', incident: updated };
}
