// The check of an incident awaiting its replacement: probe the cluster (read-only), clean up a
// learner stuck past its window (it has no vote), and let core say whether the cluster is whole
// again (replacement-check.ts). Runs in probe-members, on the RetryDue the check schedules for
// itself (the catalogue routes it here by its reason): probe-members already reaches etcd, and the short-wait and Scheduler paths carry only
// RetryDue, so the check costs no function, queue or role of its own.
import type { DetailOf } from '../../../events/catalogue.ts';
import { isLine, journalSteps, markerOf, type JournalEntry } from '../../core/incident/index.ts';
import type { ReasonCode } from '../../core/common/index.ts';
import { checkReplacement, type RemovedMember, type ReplacementVerdict } from '../../core/replacement/index.ts';
import { describeMember, type ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { Incident, IncidentPatch, OutboxEntry } from '../../ports/incident-store.ts';
import { clusterGuard, guarded } from '../fleet/index.ts';
import { type ClusterDeps, envelopeOf, iso, journaling, memberRef, publishing, runStep, type StepOutcome } from '../common/index.ts';
import { probeCluster } from '../view/index.ts';
import { cleanUpStuckLearners } from '../learners/index.ts';

export const checkReplacementDue = (deps: ClusterDeps, detail: DetailOf<'RetryDue'>): Promise<ReplacementVerdict['kind'] | undefined> =>
  runStep(deps, 'probe-members', { detailType: 'RetryDue', detail }, (incident, cluster) => check(deps, cluster, incident), { runsIn: 'awaiting-replacement' });

/** The first check, scheduled as the removal completes: one checkEveryMs later. */
export function firstCheck(
  incident: Incident,
  cluster: ClusterEntry,
  now: number,
): { patch: Pick<IncidentPatch, 'attempt' | 'waits'>; effects: OutboxEntry[] } {
  return scheduleCheck(incident, now + cluster.policy.replacement.checkEveryMs, 'REPLACEMENT_AWAITED');
}

/**
 * A check whose chain was cut (its RetryDue lost, or its step failed for good): checked again now,
 * as overdue when it already said so. None once the checks ended: a person was told to act.
 */
export function resumedCheck(incident: Incident, journal: readonly JournalEntry[], now: number): ReturnType<typeof scheduleCheck> | undefined {
  const said = journal.flatMap((e) => (isLine(e, journalSteps.replacementChecked) ? [e.detail.reason] : []));
  if (said.includes('REPLACEMENT_CHECKS_ENDED')) return undefined;
  return scheduleCheck(incident, now, said.includes('REPLACEMENT_OVERDUE') ? 'REPLACEMENT_OVERDUE' : 'REPLACEMENT_AWAITED');
}

/** The next check, as a new attempt that only waits: it spends nothing of the attempt budget. */
function scheduleCheck(incident: Incident, at: number, reason: ReasonCode): { patch: Pick<IncidentPatch, 'attempt' | 'waits'>; effects: OutboxEntry[] } {
  const next = incident.attempt + 1;
  const detail = { incidentId: incident.incidentId, clusterId: incident.clusterId, attempt: next, at: iso(at), reason };
  return {
    patch: { attempt: next, waits: incident.waits + 1 },
    effects: [{ kind: 'schedule', request: { name: `${incident.incidentId}-check-${next}`, at, event: { detailType: 'RetryDue', detail } } }],
  };
}

async function check(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident): Promise<StepOutcome<ReplacementVerdict['kind']>> {
  const journal = await deps.store.journal(incident.incidentId);
  const removed = removedMember(incident, journal);
  const probed = await probeCluster(deps, cluster, incident.views.at(-1));
  const cleanup = await cleanUpStuckLearners(deps, cluster, incident, probed, journal, describeMember({ id: removed.memberId, name: removed.memberName }));
  const view = cleanup.view;
  const now = deps.clock.now();
  const verdict = checkReplacement({
    view,
    removed,
    sizeBefore: await sizeBefore(deps, cluster, incident, view),
    membersBefore: membersBefore(incident, removed.at),
    overdueSaid: journal.some((e) => isLine(e, journalSteps.replacementChecked) && e.detail.reason === 'REPLACEMENT_OVERDUE'),
    now,
    policy: cluster.policy,
  });
  const said = { reason: verdict.reason, message: verdict.message, evidence: verdict.evidence };
  const noted = journaling(now, { step: journalSteps.replacementChecked, detail: { reason: verdict.reason, message: verdict.message } });
  // The views stay those of the remediation: the size and the members before the removal are read from them.
  const base: IncidentPatch = {};
  const effects = cleanup.effects;
  switch (verdict.kind) {
    case 'replaced': {
      const detail = {
        ...envelopeOf(incident, now),
        target: memberRef(incident),
        removedAt: iso(removed.at),
        replacedAfterMs: verdict.replacedAfterMs,
        ...said,
      };
      return {
        incident,
        patch: { ...base, state: 'completed', result: detail },
        effects: [...effects, noted, publishing('RemediationReplaced', detail)],
        value: verdict.kind,
      };
    }
    case 'awaited': {
      const next = scheduleCheck(incident, verdict.checkAt, verdict.reason);
      return { incident, patch: { ...base, ...next.patch }, effects: [...effects, ...next.effects], value: verdict.kind };
    }
    case 'overdue': {
      const next = scheduleCheck(incident, verdict.checkAt, verdict.reason);
      const firstTime = !(verdict.evidence.overdueSaid === true);
      const overdue = firstTime
        ? [noted, publishing('ReplacementOverdue', { ...envelopeOf(incident, now), ...overdueFacts(incident, removed, cluster), ...said })]
        : [];
      return { incident, patch: { ...base, ...next.patch }, effects: [...effects, ...overdue, ...next.effects], value: verdict.kind };
    }
    case 'ended':
      return {
        incident,
        patch: base,
        effects: [...effects, noted, publishing('ReplacementOverdue', { ...envelopeOf(incident, now), ...overdueFacts(incident, removed, cluster), ...said })],
        value: verdict.kind,
      };
  }
}

const overdueFacts = (incident: Incident, removed: RemovedMember, cluster: ClusterEntry) => ({
  target: memberRef(incident),
  removedAt: iso(removed.at),
  windowMs: cluster.policy.replacement.windowMs,
});

/** The member this incident removed, and when: the journal's member-removed marker. */
function removedMember(incident: Incident, journal: readonly JournalEntry[]): RemovedMember {
  const marker = markerOf(journal, journalSteps.memberRemoved);
  return { memberId: incident.memberId ?? '0', memberName: incident.memberName ?? '', at: marker?.at ?? incident.updatedAt };
}

/**
 * The size to be back to: this incident's removal record (the size it had, or one an earlier
 * unreplaced removal left owed), as the one-member-down rule reads it; when etcd does not answer
 * for it, the voting members of the last view that still held the removed member.
 */
async function sizeBefore(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident, view: ClusterView): Promise<number> {
  const read = await guarded(clusterGuard(deps, cluster, view, undefined), (g) => g.removals());
  const ours = read.ok ? read.value.find((r) => r.incidentId === incident.incidentId) : undefined;
  if (ours) return ours.sizeBefore;
  const before = [...incident.views].reverse().find((v) => v.members.some((m) => m.id === incident.memberId));
  return before ? before.members.filter((m) => !m.isLearner).length : view.members.filter((m) => !m.isLearner).length + 1;
}

/** The members of the last view taken before the removal: the ones not in it joined since. */
function membersBefore(incident: Incident, removedAt: number): string[] {
  const before = [...incident.views].reverse().find((v) => v.at <= removedAt) ?? incident.views[0];
  return before ? before.members.map((m) => m.id) : [];
}
