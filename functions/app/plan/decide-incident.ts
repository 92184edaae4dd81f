// move-leader's decision, before any move: resume a removal under way, check the target, ask the
// pure planner, and turn everything into a dry run when the policy says so. Reads the store; makes
// no etcd call.
import type { Decision, EtcdFailure } from '../../core/common/index.ts';
import { asDryRun } from '../../core/policy/index.ts';
import { NO_LEASE_PATH, remediationHistoryFrom, type RemediationHistory, resumeAfterRemoval } from '../../core/removal/index.ts';
import { approveMemberlessMachine, memberlessMachine, notControlPlane } from '../../core/kubernetes/index.ts';
import { checkTargetFound } from '../../core/plan/index.ts';
import { removalTimesOf, replacementPending, type RemovalRecord } from '../../core/replacement/index.ts';
import { describeSelector, describeMember, memberGone, type ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { Incident } from '../../ports/incident-store.ts';
import { clusterGuard, guarded, guardFailed, type Guarded, fleetFactsWithHolds } from '../fleet/index.ts';
import { type ClusterDeps, type Deps, maintenanceFacts, membersUnderRemediation, planIncident } from '../common/index.ts';
import { afterRemovalByAnother } from '../removal/index.ts';

/** `view` is the one the MembersProbed carried: the newest the incident holds. */
export async function decideIncident(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident, view: ClusterView): Promise<Decision> {
  // A crash after the member was removed resumes in remediate, not here: the member is gone.
  if (await removalUnderWay(deps, incident, view)) return resumeDecision(deps, cluster, incident);
  // A selector that matched no member leaves no id to plan for: the core's target check says so now.
  if (!incident.memberId) {
    const found = checkTargetFound(view, { described: describeSelector(incident.target) }, { target: incident.target });
    if (found !== 'pass') return noMemberMatched(deps, cluster, incident, view, found);
  }
  // Said before any leader is moved for a removal that could not happen; remediate checks it again under the lock.
  const read = incident.memberId ? await removalsSeen(deps, cluster, incident.memberId, view) : ({ ok: true, value: [] } as const);
  const records = read.ok ? read.value : [];
  const gone = !!incident.memberId && memberGone(view, incident.memberId);
  // Gone from the list may be "removed a moment ago by another": a record we could not read tells neither.
  if (!read.ok && gone) return unreadRecord(deps, cluster, incident, read);
  const byAnother = await afterRemovalByAnother(deps, incident, records, {
    incidentId: incident.incidentId,
    memberId: incident.memberId!,
    name: incident.memberName || incident.memberId!,
    memberGone: gone,
  });
  if (byAnother) return cluster.policy.dryRun ? asDryRun(byAnother) : byAnother;
  const pending = replacementPending(records, {
    view,
    targetId: incident.memberId ?? '',
    incidentId: incident.incidentId,
    allowShrink: cluster.policy.allowShrink,
    now: deps.clock.now(),
  });
  if (pending) return pending;
  // KCP's retry limits count this target's remediations by any remediator: the record in etcd, or
  // this state's own ledger, whichever knows more.
  const options = { minHealthyPeriodMs: cluster.policy.minHealthyPeriodMs, now: deps.clock.now() };
  const remediation = mostRemediated(
    await deps.store.remediationHistory(incident.clusterId, incident.targetKey, options),
    remediationHistoryFrom(removalTimesOf(records, incident.targetKey), options),
  );
  // The pauses and the storm hold in the cluster's etcd join the store's: a person who paused from another state file holds this one too.
  const fleet = await fleetFactsWithHolds(deps, cluster, clusterGuard(deps, cluster, view, incident.memberId));
  const maintenance = await maintenanceFacts(deps, cluster.clusterId);
  const decision = planIncident(
    deps,
    cluster,
    incident,
    remediation,
    await membersUnderRemediation(deps, incident),
    fleet.ok ? fleet.value : fleet.storeFacts,
    maintenance,
  );
  // An unread record or unread holds are no answer: nothing is moved or approved on them. A block,
  // a close or a wait stands on its own (both are read again on the next look).
  const acts = decision.kind === 'approve' || decision.kind === 'move-leader';
  if (!read.ok && acts) return unreadRecord(deps, cluster, incident, read);
  if (!fleet.ok && acts) return guardFailed(deps, cluster, incident, 'read the pauses and holds', fleet, whoOf(incident));
  return cluster.policy.dryRun ? asDryRun(decision) : decision;
}

/** No member matched the selector: `notFound` stands unless the record, a memberless Machine or the Machine list says more. */
async function noMemberMatched(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident, view: ClusterView, notFound: Decision): Promise<Decision> {
  // Not found because another remediator removed it by that name a moment ago: that one owns it.
  const byAnother = await removedByName(deps, cluster, incident, view);
  if (byAnother) return byAnother;
  const machine = memberlessMachine(view, incident.target);
  if (machine) return cluster.policy.dryRun ? asDryRun(approveMemberlessMachine(view, machine)) : approveMemberlessMachine(view, machine);
  // Not a control-plane Machine at all (a worker, say): said so, not taken for a missing member.
  return notControlPlane(view, incident.target, cluster.kube?.management?.clusterName) ?? notFound;
}

/** The removal record could not be read: a retry (or, when etcd refuses it for good, a block), never "no record". */
const unreadRecord = (deps: Deps, cluster: ClusterEntry, incident: Incident, failed: { failure: EtcdFailure; where: string }): Decision =>
  guardFailed(deps, cluster, incident, 'read the removal record', failed, whoOf(incident));

const whoOf = (incident: Incident): string =>
  incident.memberName ? describeMember({ id: incident.memberId ?? '', name: incident.memberName }) : describeSelector(incident.target);

/**
 * The member is out: marked removed, or gone from the member list once remediate had begun (a
 * crash between MemberRemove and its marker). Either way the rest of remediation must still run.
 */
async function removalUnderWay(deps: Deps, incident: Incident, view: ClusterView): Promise<boolean> {
  if (await deps.store.stepDone(incident.incidentId, 'member-removed')) return true;
  const gone = !!incident.memberId && memberGone(view, incident.memberId);
  return gone && (await deps.store.stepDone(incident.incidentId, 'lock-taken'));
}

/** Resuming skips the planner, so the incident deadline is checked there: an election that never ends must not loop. */
async function resumeDecision(deps: Deps, cluster: ClusterEntry, incident: Incident): Promise<Decision> {
  const who = describeMember({ id: incident.memberId ?? incident.targetKey, name: incident.memberName ?? '' });
  const journal = await deps.store.journal(incident.incidentId);
  return resumeAfterRemoval({ who, openedAt: incident.openedAt, now: deps.clock.now(), lastDecision: incident.lastDecision, journal }, cluster.policy);
}

/** A selector naming a member by name that the removal record says another incident removed. */
async function removedByName(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident, view: ClusterView): Promise<Decision | undefined> {
  const name = incident.target.memberName ?? incident.target.nodeName;
  if (!name) return undefined;
  const read = await removalsSeen(deps, cluster, undefined, view);
  // No lease path at all: nothing can be removed either way, so the target check's block stands.
  if (!read.ok && read.failure.message === NO_LEASE_PATH) return undefined;
  // Not found may be "removed a moment ago by another": a record we could not read tells neither.
  if (!read.ok) return unreadRecord(deps, cluster, incident, read);
  // Called when no member matched: the named one is gone from the list.
  return afterRemovalByAnother(deps, incident, read.value, {
    incidentId: incident.incidentId,
    memberName: cluster.aliases?.[name] ?? name,
    name,
    memberGone: true,
  });
}

function removalsSeen(deps: ClusterDeps, cluster: ClusterEntry, targetId: string | undefined, view: ClusterView): Promise<Guarded<RemovalRecord[]>> {
  return guarded(clusterGuard(deps, cluster, view, targetId), (g) => g.removals());
}

/** The same remediations may be in both: take the history that counts more, never the sum. */
const mostRemediated = (a: RemediationHistory, b: RemediationHistory): RemediationHistory =>
  b.retryCount > a.retryCount || (b.retryCount === a.retryCount && (b.lastRemediatedAt ?? 0) > (a.lastRemediatedAt ?? 0)) ? b : a;
