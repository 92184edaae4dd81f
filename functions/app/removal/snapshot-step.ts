// remediate's step 3: the snapshot before the removal, journaled either way. Taken: marked, with
// where it is, its size and SHA-256. Failed: a line of its own; then, when the policy requires a
// snapshot, the decision that stops the removal, else the removal goes on without one.
import type { DetailOf } from '../../../events/catalogue.ts';
import { type Decision, MAX_TIMELINE_DETAIL_BYTES, clipText } from '../../core/common/index.ts';
import { isLine, journalSteps, markerOf, type JournalEntry } from '../../core/incident/index.ts';
import { describeSnapshotFailure, isTransient, snapshotFailed } from '../../core/removal/index.ts';
import type { ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { Incident } from '../../ports/incident-store.ts';
import { type ClusterDeps, nextTryAt } from '../common/index.ts';
import { takeSnapshot } from './take-snapshot.ts';

export type SnapshotSaid = NonNullable<DetailOf<'RemediationCompleted'>['snapshot']>;

/** Undefined when the removal may go on: the snapshot was taken, or failed and is not required. */
export async function snapshotBeforeRemoval(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  incident: Incident,
  fresh: ClusterView,
  name: string,
): Promise<Decision | undefined> {
  const id = incident.incidentId;
  const snap = await takeSnapshot(deps, cluster, fresh, { clusterId: incident.clusterId, incidentId: id, member: name, memberId: incident.memberId! });
  if (snap.ok) {
    const { ok: _ok, ...taken } = snap;
    await deps.store.markStep(id, { at: deps.clock.now(), step: journalSteps.snapshotTaken, detail: taken });
    return undefined;
  }
  const required = cluster.policy.snapshotRequired;
  const transient = isTransient(snap.failure);
  // Counted before this one is written: the retries a transient failure has had already.
  const earlierTransient = (await deps.store.journal(id)).filter((e) => isLine(e, journalSteps.snapshotFailed) && e.detail.transient).length;
  await deps.store.appendJournal(id, {
    at: deps.clock.now(),
    step: journalSteps.snapshotFailed,
    detail: { problem: describeSnapshotFailure(snap.failure), required, transient },
  });
  if (!required) return undefined;
  return snapshotFailed(name, snap.failure, { earlierTransient, retryAt: nextTryAt(deps, cluster, incident) });
}

/**
 * What RemediationCompleted says of the snapshot: the one taken, or why the removal went on
 * without one. Nothing for a policy that asked for none.
 */
export function snapshotSaid(journal: readonly JournalEntry[]): SnapshotSaid | undefined {
  const taken = markerOf(journal, journalSteps.snapshotTaken)?.detail;
  if (taken) {
    const { location, via, bytes, sha256, tookMs } = taken;
    return { location: clipText(location, MAX_TIMELINE_DETAIL_BYTES), via: clipText(via, MAX_TIMELINE_DETAIL_BYTES), bytes, sha256, tookMs };
  }
  const failed = journal.findLast((e) => isLine(e, journalSteps.snapshotFailed));
  return failed && { failed: clipText(failed.detail.problem, MAX_TIMELINE_DETAIL_BYTES) };
}
