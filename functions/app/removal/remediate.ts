// remediate: under the cluster lock, check the gates on a fresh probe, remove the member, wait for
// a leader among the rest, replace the machine. Every step is marked in the journal, so a run
// that crashed part-way resumes after the last step it finished.
import type { DetailOf } from '../../../events/catalogue.ts';
import { type Decision, boundedTimeline } from '../../core/common/index.ts';
import { dryRunSinceApproval } from '../../core/policy/index.ts';
import { journalSteps, markerOf, type JournalLine, type MarkerStep, timelineOf } from '../../core/incident/index.ts';
import { leaderMoveOf } from '../../core/move/index.ts';
import { machineSeen } from '../../core/kubernetes/index.ts';
import { removalFailed, actuatorFailed, clusterLocked, gatesUnderLock, noLeaderAfterRemoval } from '../../core/removal/index.ts';
import { probeDeadlineMs } from '../../core/budget/index.ts';
import { removalByAnother, removalRecordFor, replacementPending, withRecord } from '../../core/replacement/index.ts';
import { waitsInARowAfter } from '../../core/waits/index.ts';
import { withView, describeMember, memberGone, type ClusterView } from '../../core/view/index.ts';
import type { ReplaceRequest, ReplaceResult } from '../../ports/actuator.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { ClusterGuard } from '../../ports/cluster-guard.ts';
import type { Incident } from '../../ports/incident-store.ts';
import { withTimeout } from '../../lib/with-timeout.ts';
import { firstCheck } from '../replacement/index.ts';
import {
  guarded,
  guardFailed,
  takeClusterLock,
  type HeldLock,
  fleetFactsWithHolds,
  pausedRemediation,
  releaseRemovalSlot,
  takeSlotForRemoval,
} from '../fleet/index.ts';
import {
  type ClusterDeps,
  decisionEffects,
  type Deps,
  envelopeOf,
  failureEffects,
  memberRef,
  nextTryAt,
  maintenanceFacts,
  planIncident,
  publishing,
  removeMember,
  runStep,
  type StepOutcome,
} from '../common/index.ts';
import { probeCluster } from '../view/index.ts';
import { afterRemovalByAnother } from './removed-by-another.ts';
import { snapshotBeforeRemoval, snapshotSaid } from './snapshot-step.ts';
import { waitForNewLeader } from './wait-for-leader.ts';
import type { FleetFacts } from '../../core/fleet/index.ts';

export type Remediated = Decision | 'completed' | 'failed';

export const remediate = (deps: ClusterDeps, detail: DetailOf<'RemediationApproved'>): Promise<Remediated | undefined> =>
  runStep(deps, 'remediate', { detailType: 'RemediationApproved', detail }, (incident, cluster) => underLock(deps, cluster, incident));

async function underLock(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident): Promise<StepOutcome<Remediated>> {
  const attempt = await takeClusterLock(deps, cluster, incident.incidentId, incident.views.at(-1), incident.memberId);
  if (!attempt.held) {
    const decision =
      'busy' in attempt
        ? lockBusy(deps, cluster, incident, attempt.busy)
        : guardFailed(deps, cluster, incident, 'take the cluster lock', attempt, nameOf(incident));
    return decided(deps, incident, decision);
  }
  const { lock } = attempt;
  try {
    await mark(deps, incident.incidentId, { step: journalSteps.lockTaken, detail: { owner: lock.owner, where: lock.where } });
    return await runSteps(deps, cluster, incident, lock);
  } finally {
    await releaseRemovalSlot(deps, incident.incidentId);
    await lock.release();
    await lockReleased(deps, incident.incidentId, lock);
  }
}

/** A journal line, not a step marker: every run that held the lock lets it go. Best effort, as the release is. */
async function lockReleased(deps: Deps, incidentId: string, lock: HeldLock): Promise<void> {
  try {
    await deps.store.appendJournal(incidentId, { at: deps.clock.now(), step: journalSteps.lockReleased, detail: { owner: lock.owner, where: lock.where } });
  } catch (error) {
    deps.log.warn('lock release not journaled', { incidentId, error: String(error) });
  }
}

async function runSteps(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident, lock: HeldLock): Promise<StepOutcome<Remediated>> {
  const id = incident.incidentId;
  // Nothing that changes the cluster runs while it is paused: no removal, no actuator call.
  const paused = await pausedRemediation(deps, cluster, incident, incident.memberId ? nameOf(incident) : incident.targetKey, lock.guard);
  if (paused) return decided(deps, incident, paused);
  // A Machine whose member is already out of etcd: nothing to remove, straight to the actuator.
  const memberId = incident.memberId;
  if (!memberId)
    return replaceStep(deps, cluster, incident, leaderNow(incident), { id: '0', name: incident.target.machineName ?? incident.target.nodeName ?? '' });
  // A removal in this run starts a new row of looks for a leader; a resumed run goes on from the
  // row its approval passed on.
  let row = waitsInARowAfter(incident.lastDecision);
  if (!(await deps.store.stepDone(id, journalSteps.memberRemoved))) {
    const step = await removeStep(deps, cluster, incident, lock);
    incident = step.incident;
    if (step.decision) return decided(deps, incident, step.decision);
    row = 0;
  }
  const leader = (await leaderMarked(deps, id)) ?? (await electionStep(deps, cluster, incident, row));
  if ('kind' in leader) return decided(deps, incident, leader);
  // Confirmed once a leader stands (a write during the election would find none): then it counts
  // for KCP's retry limits of every remediator. The intent already holds the size still owed.
  await confirmRemoval(deps, lock.guard, id);
  return replaceStep(deps, cluster, incident, leader, { id: memberId, name: incident.memberName ?? '' });
}

/** The leader the incident's newest view agrees on, for an incident that removed nothing. */
function leaderNow(incident: Incident): { id: string; name: string } {
  const leader = incident.views.at(-1)?.leader;
  return leader?.consensus === 'agreed' && leader.id ? { id: leader.id, name: leader.name ?? '' } : { id: '0', name: '' };
}

/** Step 6: the actuator, once; then the incident completes. */
async function replaceStep(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  incident: Incident,
  leader: { id: string; name: string },
  member: { id: string; name: string },
): Promise<StepOutcome<Remediated>> {
  const id = incident.incidentId;
  if (!(await deps.store.stepDone(id, journalSteps.actuatorCalled))) {
    let result: ReplaceResult;
    try {
      const machine = machineSeen(incident.views, { target: incident.target, ...(incident.memberId ? { memberId: incident.memberId } : {}) });
      result = await replaceWithin(deps, cluster, {
        clusterId: incident.clusterId,
        incidentId: id,
        member,
        target: incident.target,
        ...(machine ? { machine } : {}),
      });
    } catch (error) {
      // The member is already out of etcd: say so, and leave the machine to a person.
      const said = error instanceof Error ? error.message : String(error);
      await deps.store.recordRemediation(incident.clusterId, incident.targetKey, await removedAt(deps, id));
      return { incident, ...failureEffects(incident, actuatorFailed(member, leader, deps.actuator.name, said), deps.clock.now()), value: 'failed' };
    }
    // Outside the try: failing to record the call is not the actuator failing. The step is
    // retried, and asks again with the same incident id, which the actuator takes as one request.
    await mark(deps, id, { step: journalSteps.actuatorCalled, detail: { actuator: deps.actuator.name, said: result.detail } });
  }
  return complete(deps, cluster, incident, leader);
}

const decided = (deps: Deps, incident: Incident, decision: Decision): StepOutcome<Remediated> => ({
  incident,
  ...decisionEffects(incident, decision, 'remediate', deps.clock.now()),
  value: decision,
});

/** The actuator, bounded by the policy: a call that never returns must not hold the lock for ever. */
function replaceWithin(deps: ClusterDeps, cluster: ClusterEntry, request: ReplaceRequest): Promise<ReplaceResult> {
  const timeoutMs = cluster.policy.actuatorTimeoutMs;
  return withTimeout(
    timeoutMs,
    (signal) => deps.actuator.replace({ ...request, signal }),
    () => new Error(`no answer within ${timeoutMs} ms`),
  );
}

const nameOf = (incident: Incident): string => describeMember({ id: incident.memberId!, name: incident.memberName ?? '' });

const mark = (deps: Deps, incidentId: string, line: Extract<JournalLine, { step: MarkerStep }>) =>
  deps.store.markStep(incidentId, { at: deps.clock.now(), ...line });

/** When the member-removed marker was written: the remediation's time, the same on every retry. */
async function removedAt(deps: Deps, incidentId: string): Promise<number> {
  return markerOf(await deps.store.journal(incidentId), journalSteps.memberRemoved)?.at ?? deps.clock.now();
}

const lockBusy = (deps: Deps, cluster: ClusterEntry, incident: Incident, why: string): Decision =>
  clusterLocked(nameOf(incident), incident.clusterId, why, nextTryAt(deps, cluster, incident));

interface Checked {
  incident: Incident;
  fresh: ClusterView;
  /** 'gone' when the member already left the list; otherwise the gates' verdict on the fresh view. */
  verdict: 'gone' | Decision;
}

/** A fresh probe, kept on the incident, and the gates checked on it again. */
async function probeAndCheck(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident, guard: ClusterGuard): Promise<Checked> {
  const fresh = await probeCluster(deps, cluster, incident.views.at(-1), probeDeadlineMs(cluster.policy, incident.views));
  const updated = await deps.store.updateIncident(
    incident.incidentId,
    { views: withView(incident.views, fresh) },
    { expectVersion: incident.version, now: deps.clock.now() },
  );
  if (memberGone(fresh, incident.memberId!)) return { incident: updated, fresh, verdict: 'gone' };
  // The holds in etcd are read under the lock, right before the removal: a pause written a moment ago holds it.
  const fleet = await fleetFactsWithHolds(deps, cluster, guard);
  const verdict = fleet.ok
    ? await recheckGates(deps, cluster, updated, fleet.value)
    : guardFailed(deps, cluster, updated, 'read the pauses and holds', fleet, nameOf(updated));
  return { incident: updated, fresh, verdict };
}

/** Steps 2–4: a fresh probe, the gates again, the snapshot if asked for, and MemberRemove. */
async function removeStep(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident, lock: HeldLock): Promise<{ incident: Incident; decision?: Decision }> {
  const id = incident.incidentId;
  // The policy is read afresh on every run: a cluster switched to dry run since approval is not touched.
  if (cluster.policy.dryRun) return { incident, decision: dryRunSinceApproval(nameOf(incident), incident.clusterId) };
  const name = incident.memberName || incident.memberId!;
  let checked = await probeAndCheck(deps, cluster, incident, lock.guard);
  if (checked.verdict === 'gone') return removedBefore(deps, cluster, checked.incident, name, lock);
  if (checked.verdict.kind !== 'approve') return { incident: checked.incident, decision: checked.verdict };

  if (cluster.policy.snapshotBeforeRemove && !(await deps.store.stepDone(id, journalSteps.snapshotTaken))) {
    const stopped = await snapshotBeforeRemoval(deps, cluster, checked.incident, checked.fresh, name);
    if (stopped) return { incident: checked.incident, decision: stopped };
    // The snapshot took time, taken or not: the cluster may have changed under it, so look and judge again.
    checked = await probeAndCheck(deps, cluster, checked.incident, lock.guard);
    if (checked.verdict === 'gone') return removedBefore(deps, cluster, checked.incident, name, lock);
    if (checked.verdict.kind !== 'approve') return { incident: checked.incident, decision: checked.verdict };
  }
  // One member down at a time, for every remediator: the record in etcd says what is still owed.
  // A record that cannot be read is no answer: nothing is removed until it can.
  const read = await guarded(lock.guard, (g) => g.removals());
  if (!read.ok)
    return { incident: checked.incident, decision: guardFailed(deps, cluster, checked.incident, 'read the removal record', read, nameOf(checked.incident)) };
  const records = read.value;
  const context = { view: checked.fresh, targetId: incident.memberId!, incidentId: id, now: deps.clock.now() };
  const pending = replacementPending(records, { ...context, allowShrink: cluster.policy.allowShrink });
  if (pending) return { incident: checked.incident, decision: pending };
  // Ours since the probe, or nothing is removed: the lock may have lapsed under a long step.
  const ours = await guarded(lock.guard, () => lock.stillHeld());
  if (!ours.ok)
    return { incident: checked.incident, decision: guardFailed(deps, cluster, checked.incident, 'take the cluster lock', ours, nameOf(checked.incident)) };
  if (!ours.value)
    return { incident: checked.incident, decision: lockBusy(deps, cluster, checked.incident, 'our hold on the lock lapsed and another remediation took it') };
  // One of the fleet's removals in flight, taken last: a slot is held only by a removal about to happen.
  const slotted = await takeSlotForRemoval(deps, cluster, checked.incident, nameOf(checked.incident), checked.verdict, lock.guard);
  if (slotted) return { incident: checked.incident, decision: slotted };
  // Recorded before the call: a removal that happens is never missing from the record.
  const record = removalRecordFor(records, { ...context, by: lock.owner, targetKey: incident.targetKey });
  const saved = await guarded(lock.guard, (g) => g.saveRemovals(withRecord(records, record)));
  if (!saved.ok)
    return { incident: checked.incident, decision: guardFailed(deps, cluster, checked.incident, 'write the removal record', saved, nameOf(checked.incident)) };

  const removed = await removeMember(deps, cluster, checked.fresh, incident.memberId!);
  if (removed.kind === 'removed') {
    await mark(deps, id, { step: journalSteps.memberRemoved, detail: { via: removed.via, alreadyGone: removed.alreadyGone } });
    return { incident: checked.incident };
  }
  return { incident: checked.incident, decision: removalFailed(removed, nextTryAt(deps, cluster, checked.incident)) };
}

/**
 * Gone already: removed by an earlier run of ours that stopped before it could say so, or, when the
 * record names another incident, by that one. An incident of this state replaces the machine: this
 * one ends there, and the machine is not replaced a second time. One this state does not hold
 * leaves a Machine the report named to this one: the rest of remediation runs, removing nothing.
 */
async function removedBefore(
  deps: Deps,
  cluster: ClusterEntry,
  incident: Incident,
  name: string,
  lock: HeldLock,
): Promise<{ incident: Incident; decision?: Decision }> {
  // Whose removal it was decides whether this incident replaces the machine: unread is no answer.
  const read = await guarded(lock.guard, (g) => g.removals());
  if (!read.ok) return { incident, decision: guardFailed(deps, cluster, incident, 'read the removal record', read, nameOf(incident)) };
  const ctx = { incidentId: incident.incidentId, memberId: incident.memberId!, name: nameOf(incident), memberGone: true };
  const byAnother = await afterRemovalByAnother(deps, incident, read.value, ctx);
  if (byAnother && byAnother.kind !== 'approve') return { incident, decision: byAnother };
  const by = byAnother && removalByAnother(read.value, ctx);
  await mark(deps, incident.incidentId, {
    step: journalSteps.memberRemoved,
    detail: { absentFromList: name, ...(by ? { removedBy: `incident ${by.incidentId} (${by.by})` } : {}) },
  });
  return { incident };
}

/** Step 5: a leader among the rest, or a retry while the election runs, longer each look in a row (`before` of them). */
async function electionStep(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident, before: number): Promise<{ id: string; name: string } | Decision> {
  const id = incident.incidentId;
  const removed = await removedAt(deps, id);
  const elected = await waitForNewLeader(deps, cluster, incident.memberId!, incident.views.at(-1));
  if (!elected) return noLeaderAfterRemoval(nameOf(incident), { now: deps.clock.now(), openedAt: incident.openedAt, before }, cluster.policy);
  const leader = { id: elected.id, name: elected.name };
  await mark(deps, id, { step: journalSteps.leaderElected, detail: { ...leader, term: elected.term, afterRemovalMs: deps.clock.now() - removed } });
  return leader;
}

/** The budget was checked when the removal was approved; this run is that remediation. */
const recheckGates = async (deps: Deps, cluster: ClusterEntry, incident: Incident, fleet: FleetFacts): Promise<Decision> =>
  gatesUnderLock(planIncident(deps, cluster, incident, { retryCount: 0 }, [], fleet, await maintenanceFacts(deps, cluster.clusterId)), deps.clock.now());

async function leaderMarked(deps: Deps, incidentId: string): Promise<{ id: string; name: string } | undefined> {
  const entry = markerOf(await deps.store.journal(incidentId), journalSteps.leaderElected);
  return entry && { id: entry.detail.id, name: entry.detail.name };
}

async function complete(deps: Deps, cluster: ClusterEntry, incident: Incident, leader: { id: string; name: string }): Promise<StepOutcome<Remediated>> {
  const now = deps.clock.now();
  const journal = await deps.store.journal(incident.incidentId);
  // The journal keeps every line; the event, its first and last within its limits.
  const timeline = boundedTimeline(timelineOf(journal));
  const leaderMove = leaderMoveOf(journal, incident.lastDecision);
  // Keyed by the removal's time, so a retried completion records it once.
  await deps.store.recordRemediation(incident.clusterId, incident.targetKey, await removedAt(deps, incident.incidentId));
  const snapshot = snapshotSaid(journal);
  const detail = { ...envelopeOf(incident, now), target: memberRef(incident), leaderMove, newLeader: leader, timeline, ...(snapshot ? { snapshot } : {}) };
  // Done is replaced: the incident awaits its replacement, checked from one checkEveryMs on.
  const check = firstCheck(incident, cluster, now);
  return {
    incident,
    patch: { state: 'awaiting-replacement', result: detail, ...check.patch },
    effects: [publishing('RemediationCompleted', detail), ...check.effects],
    value: 'completed',
  };
}

/** Marks this incident's record confirmed. Best effort: a failure is logged, and the intent still holds the size owed. */
async function confirmRemoval(deps: Deps, guard: ClusterGuard, incidentId: string): Promise<void> {
  try {
    const records = await guard.removals();
    const ours = records.find((r) => r.incidentId === incidentId);
    if (ours && !ours.confirmed) await guard.saveRemovals(withRecord(records, { ...ours, confirmed: true }));
  } catch (error) {
    deps.log.warn('removal not confirmed in the record', { incidentId, error: String(error) });
  }
}
