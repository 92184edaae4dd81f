// Small helpers every step uses to speak about its incident: envelopes, targets, outbox entries.
import { type DetailOf, type DetailType, type EventEnvelope, makeEvent } from '../../../events/catalogue.ts';
import { describeTime } from '../../core/view/index.ts';
import type { JournalLine } from '../../core/incident/index.ts';
import type { Incident, OutboxEntry } from '../../ports/incident-store.ts';

/** Events and the journal speak ISO-8601, as the planner's sentences do. */
export const iso = describeTime;

/** The fields every detail carries, for this incident, now. */
export const envelopeOf = (incident: Incident, now: number) => ({
  incidentId: incident.incidentId,
  clusterId: incident.clusterId,
  attempt: incident.attempt,
  at: iso(now),
});

/** The incident's target as events carry it: the original selector plus the member it resolved to. */
export const resolvedTarget = (incident: Incident) => ({
  ...incident.target,
  ...(incident.memberId ? { memberId: incident.memberId } : {}),
  ...(incident.memberName !== undefined ? { name: incident.memberName } : {}),
});

export const memberRef = (incident: Incident) => ({ memberId: incident.memberId ?? '0', name: incident.memberName ?? '' });

/** An event for the outbox, built now and published after the step commits. */
export const publishing = <T extends DetailType>(detailType: T, detail: DetailOf<T>): OutboxEntry => ({
  kind: 'publish',
  event: makeEvent(detailType, detail) as EventEnvelope,
});

/** A journal line for the outbox. */
export const journaling = (at: number, line: JournalLine): OutboxEntry => ({ kind: 'journal', entry: { at, ...line } });
