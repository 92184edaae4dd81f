// probe-members: open (or join) the incident, probe every member on its own, publish the view.
import type { DetailOf } from '../../events/catalogue.ts';
import { judgeLeader, streakOf } from '../core/evidence.ts';
import { resolveTarget, selectorOf, targetKeyOf } from '../core/target.ts';
import { withView } from '../core/view-history.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import type { Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';
import { envelopeOf, journaling, publishing, resolvedTarget } from './incident-events.ts';
import { probeCluster } from './probe-cluster.ts';
import { flushOutbox, runStep, type StepOutcome } from './step.ts';

type Input = { detailType: 'MemberUnhealthy'; detail: DetailOf<'MemberUnhealthy'> } | { detailType: 'RetryDue'; detail: DetailOf<'RetryDue'> };

export type ProbeOutcome = { kind: 'probed'; incident: Incident } | { kind: 'joined' | 'stale'; incidentId: string };

export async function probeMembers(deps: Deps, input: Input): Promise<ProbeOutcome> {
  if (input.detailType === 'RetryDue') {
    const probed = await runStep(deps, 'probe-members', input, (incident, cluster) => probe(deps, cluster, incident));
    return probed ? { kind: 'probed', incident: probed } : { kind: 'stale', incidentId: input.detail.incidentId };
  }
  const { detail } = input;
  const now = deps.clock.now();
  // Looked up first: an unknown cluster must fail the event, not leave an open incident that every
  // later report for the same target would join and nothing would ever probe.
  await deps.directory.get(detail.clusterId);
  const target = selectorOf(detail.target);
  const opened = await deps.store.openOrJoin({
    clusterId: detail.clusterId,
    targetKey: targetKeyOf(target),
    target,
    reason: detail.reason,
    now,
    ...(detail.incidentId ? { incidentId: detail.incidentId } : {}),
  });
  const { incident } = opened;
  await deps.store.appendJournal(incident.incidentId, {
    at: now,
    step: opened.joined ? 'duplicate-joined' : 'incident-opened',
    detail: opened.joined
      ? `${detail.source}: ${detail.reason}`
      : `${detail.source} reported ${targetKeyOf(target)}: ${detail.reason} (observed ${detail.observedAt})`,
  });
  if (opened.joined && incident.attempt > 0) {
    // The chain is under way and its next attempt is scheduled: a duplicate report must not speed
    // it up. It only carries out what an earlier step may have left unsaid.
    await flushOutbox(deps, incident);
    return { kind: 'joined', incidentId: incident.incidentId };
  }
  // The first probe: a redelivered report (the first delivery failed part-way) must still probe
  // and publish; a true duplicate finds the step done or running and does nothing.
  const probed = await runStep(
    deps,
    'probe-members',
    { detailType: 'MemberUnhealthy', detail: { incidentId: incident.incidentId, attempt: 0, at: detail.at } },
    (held, cluster) => probe(deps, cluster, held),
  );
  return probed ? { kind: 'probed', incident: probed } : { kind: 'joined', incidentId: incident.incidentId };
}

async function probe(deps: Deps, cluster: ClusterEntry, incident: Incident): Promise<StepOutcome<Incident>> {
  const view = await probeCluster(deps, cluster, incident.views.at(-1));
  const now = deps.clock.now();
  const member = resolveTarget(view, incident.target, cluster.aliases, incident.memberId);
  const views = withView(incident.views, view);
  const streak = member
    ? streakOf(judgeLeader(views, member.id, cluster.policy.electionTimeoutMs, incident.leaderUnreachable))
    : undefined;
  const resolved = { ...incident, ...(member ? { memberId: member.id, memberName: member.name } : {}) };
  const reachable = view.members.filter((m) => m.reachable).length;
  const leader = `leader ${view.leader.consensus}${view.leader.name ? ` (${view.leader.name})` : ''}`;
  return {
    incident,
    patch: { views, leaderUnreachable: streak ?? null, ...(member ? { memberId: member.id, memberName: member.name } : {}) },
    effects: [
      journaling(now, 'probed', `${reachable} of ${view.members.length} members answered; ${leader}`),
      publishing('MembersProbed', { ...envelopeOf(incident, now), target: resolvedTarget(resolved), view, previousViews: incident.views }),
    ],
    value: resolved,
  };
}
