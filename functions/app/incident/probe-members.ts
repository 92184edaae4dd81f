// probe-members' incident works: open (or join) the incident on a report, probe every member on
// its own, publish the view; and the same probe on each later look.
import type { DetailOf } from '../../../events/catalogue.ts';
import {
  judgeLeader,
  streakOf,
  oversizedView,
  clusterIdOf,
  identityChanged,
  describeSelector,
  matchedMember,
  resolveTarget,
  selectorOf,
  targetKeyOf,
  type ClusterView,
  withView,
} from '../../core/view/index.ts';
import { probeDeadlineMs } from '../../core/budget/index.ts';
import { matchReport, journalSteps, membersSeen, duplicateOf } from '../../core/incident/index.ts';
import { ambiguousTarget } from '../../core/plan/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { Incident } from '../../ports/incident-store.ts';
import {
  blockEffects,
  closeEffects,
  type ClusterDeps,
  type Deps,
  envelopeOf,
  flushLeftOutbox,
  iso,
  journaling,
  publishing,
  resolvedTarget,
  runStep,
  type StepOutcome,
} from '../common/index.ts';
import { probeCluster } from '../view/index.ts';

export type ProbeOutcome = { kind: 'probed'; incident: Incident } | { kind: 'joined' | 'stale' | 'late-duplicate'; incidentId: string };

/** The incident's next look (RetryDue): probe again and publish the view. */
export async function probeAgain(deps: ClusterDeps, detail: DetailOf<'RetryDue'>): Promise<ProbeOutcome> {
  const probed = await runStep(deps, 'probe-members', { detailType: 'RetryDue', detail }, (incident, cluster) => probe(deps, cluster, incident));
  return probed ? { kind: 'probed', incident: probed } : { kind: 'stale', incidentId: detail.incidentId };
}

/** A report (MemberUnhealthy): open the incident or join the one open for its member, then probe. */
export async function openIncident(deps: ClusterDeps, detail: DetailOf<'MemberUnhealthy'>): Promise<ProbeOutcome> {
  const now = deps.clock.now();
  // Looked up first: an unknown cluster must fail the event, not leave an open incident that every
  // later report for the same target would join and nothing would ever probe.
  const cluster = await deps.directory.get(detail.clusterId);
  const target = selectorOf(detail.target);
  // Only what a match can name (open, or ended within the window): never the cluster's whole history.
  const windowMs = cluster.policy.minHealthyPeriodMs;
  const match = detail.incidentId
    ? undefined
    : matchReport(
        { target, observedAt: Date.parse(detail.observedAt) },
        await deps.store.listIncidents({ clusterId: detail.clusterId, openOrChangedSince: now - windowMs }),
        {
          now,
          windowMs,
          ...(cluster.aliases ? { aliases: cluster.aliases } : {}),
        },
      );
  if (match?.kind === 'late') {
    // Observed before that remediation ended: it describes what was fixed. Kept there, not reopened.
    await deps.store.appendJournal(match.incidentId, {
      at: now,
      step: journalSteps.lateDuplicate,
      detail: { source: detail.source, reason: detail.reason, observedAt: detail.observedAt },
    });
    return { kind: 'late-duplicate', incidentId: match.incidentId };
  }
  const joinedByMember = match?.kind === 'open' ? await deps.store.getIncident(match.incidentId) : undefined;
  const opened =
    joinedByMember?.state === 'open'
      ? { incident: joinedByMember, joined: true }
      : await deps.store.openOrJoin({
          clusterId: detail.clusterId,
          targetKey: targetKeyOf(target),
          target,
          reason: detail.reason,
          now,
          ...(detail.incidentId ? { incidentId: detail.incidentId } : {}),
        });
  const { incident } = opened;
  // The storm guard reads each cluster's newest opening; a join writes the same time again, harmless.
  await deps.store.noteOpened(incident.clusterId, incident.openedAt);
  await deps.store.appendJournal(
    incident.incidentId,
    opened.joined
      ? { at: now, step: journalSteps.duplicateJoined, detail: { source: detail.source, reason: detail.reason } }
      : {
          at: now,
          step: journalSteps.incidentOpened,
          detail: { source: detail.source, targetKey: targetKeyOf(target), reason: detail.reason, observedAt: detail.observedAt },
        },
  );
  if (opened.joined && incident.attempt > 0) {
    // The chain is under way and its next attempt is scheduled: a duplicate report must not speed
    // it up. It only carries out what an earlier step may have left unsaid.
    await flushLeftOutbox(deps, incident);
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

async function probe(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident): Promise<StepOutcome<Incident>> {
  const view = await probeCluster(deps, cluster, incident.views.at(-1), probeDeadlineMs(cluster.policy, incident.views));
  const now = deps.clock.now();
  // Said before anything is judged, and the view is not kept: no event or item could hold it.
  const oversized = oversizedView(view);
  if (oversized) return { incident, ...blockEffects(incident, oversized, 'probe-members', now), value: incident };
  const match = resolveTarget(view, incident.target, cluster.aliases, incident.memberId);
  const member = matchedMember(match);
  // Another etcd cluster under this cluster's name: refused before anything is resolved in it.
  const changed = await identityCheck(deps, cluster, incident, view, now);
  // A name several members share says nothing about which one is sick: blocked until given by id.
  const refused = changed
    ? { kind: 'block' as const, ...changed, evidence: { identity: view.identity } }
    : match.kind === 'ambiguous'
      ? ambiguousTarget(match, describeSelector(incident.target), { target: incident.target })
      : undefined;
  if (refused) {
    const { patch, effects } = blockEffects(incident, refused, 'probe-members', now);
    return { incident, patch: { ...patch, views: withView(incident.views, view) }, effects, value: incident };
  }
  // Reported by another name or id, the member already has an incident: this one ends there.
  const twin = member && !incident.memberId ? await incidentHolding(deps, incident, member.id) : undefined;
  if (twin) {
    const resolved = { ...incident, memberId: member!.id, memberName: member!.name };
    await deps.store.appendJournal(twin.incidentId, {
      at: now,
      step: journalSteps.duplicateJoined,
      detail: { incidentId: incident.incidentId, reportedAs: describeSelector(incident.target) },
    });
    const { patch, effects } = closeEffects(resolved, duplicateOf(member!, twin), 'probe-members', now);
    return { incident, patch: { ...patch, views: withView(incident.views, view), memberId: member!.id, memberName: member!.name }, effects, value: resolved };
  }
  const views = withView(incident.views, view);
  const streak = member ? streakOf(judgeLeader(views, member.id, cluster.policy.electionTimeoutMs, incident.leaderUnreachable)) : undefined;
  const resolved = { ...incident, ...(member ? { memberId: member.id, memberName: member.name } : {}) };
  const probed = {
    answered: view.members.filter((m) => m.reachable).length,
    members: view.members.length,
    leader: view.leader.consensus,
    ...(view.leader.name ? { leaderName: view.leader.name } : {}),
    listFailures: view.members.length > 0 ? [] : view.listFailures.map(({ endpoint, reachability, latencyMs }) => ({ endpoint, reachability, latencyMs })),
    seen: membersSeen(view),
  };
  const etcdClusterId = clusterIdOf(view);
  return {
    incident,
    patch: {
      views,
      leaderUnreachable: streak ?? null,
      ...(member ? { memberId: member.id, memberName: member.name } : {}),
      ...(etcdClusterId && !incident.etcdClusterId ? { etcdClusterId } : {}),
    },
    effects: [
      journaling(now, { step: journalSteps.probed, detail: probed }),
      // The new view only: move-leader reads the earlier ones from the incident this write keeps them in.
      publishing('MembersProbed', { ...envelopeOf(incident, now), target: resolvedTarget(resolved), view }),
    ],
    value: resolved,
  };
}

/** Another open incident that already resolved to the same member: the first to resolve keeps it. */
async function incidentHolding(deps: Deps, incident: Incident, memberId: string): Promise<Incident | undefined> {
  const open = await deps.store.listIncidents({ clusterId: incident.clusterId, state: 'open' });
  return open.find((o) => o.incidentId !== incident.incidentId && o.memberId === memberId);
}

/**
 * The incident is bound to the etcd cluster it first reached, and the cluster's entry remembers
 * the identity it first answered with (first write wins), so neither is ever acted on elsewhere.
 */
async function identityCheck(
  deps: Deps,
  cluster: ClusterEntry,
  incident: Incident,
  view: ClusterView,
  now: number,
): Promise<{ reason: 'CLUSTER_MISMATCH'; message: string } | undefined> {
  const seen = clusterIdOf(view);
  if (incident.etcdClusterId) {
    return identityChanged(
      { etcdClusterId: incident.etcdClusterId, what: `incident ${incident.incidentId} was bound to it when first probed` },
      view,
      cluster.clusterId,
    );
  }
  if (!seen) return undefined;
  const known = await deps.store.rememberIdentity(cluster.clusterId, seen, now);
  return identityChanged({ etcdClusterId: known.etcdClusterId, what: `remembered since ${iso(known.since)}` }, view, cluster.clusterId);
}
