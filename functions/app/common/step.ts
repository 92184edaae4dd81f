// How every function does its work on an incident, so that at-least-once delivery, a redelivery
// after a failure and a crash are all safe:
//   1. carry out what an earlier commit left in the outbox (a publish or schedule that failed);
//   2. skip the event if it is stale, its step is done at this attempt, or it runs elsewhere now;
//   3. take the step's lease on the incident (a conditional write);
//   4. do the work; it returns the incident patch and what to say and schedule;
//   5. commit patch, "step done" and the outbox in one conditional write;
//   6. carry out the outbox, then clear it.
// A failure before 5 releases the lease and throws, so the same event can be delivered again. A
// failure after 5 throws too; the redelivery finds the step done and only carries out the outbox.
import type { DetailType } from '../../../events/catalogue.ts';
import { isDecisionLine, type JournalInput } from '../../core/incident/index.ts';
import { boundedSaid } from '../../core/common/index.ts';
import { withSingleRemediatorNote } from '../../core/policy/index.ts';
import { stepBudgetMs, type StepName } from '../../core/budget/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import { VersionConflictError, type Incident, type IncidentPatch, type IncidentState, type OutboxEntry } from '../../ports/incident-store.ts';
import { currentInvocation } from '../../lib/invocation.ts';
import type { Deps } from './deps.ts';

/** What carrying out an outbox needs: the store, the bus and the scheduler. */
export type OutboxDeps = Pick<Deps, 'store' | 'clock' | 'bus' | 'scheduler'>;

export interface StepOutcome<R> {
  /** The incident as the work last wrote it: the commit is conditional on its version. */
  incident: Incident;
  patch?: IncidentPatch;
  /** Journal lines, schedules and events, carried out in this order after the commit. */
  effects: OutboxEntry[];
  value: R;
}

export type StepWork<R> = (incident: Incident, cluster: ClusterEntry) => Promise<StepOutcome<R>>;

export const stepKey = (step: StepName, attempt: number): string => `${step}@${attempt}`;

/** The event being handled, as far as the step protocol needs it. */
export interface Delivered {
  detailType: DetailType;
  detail: { incidentId: string; attempt: number; at: string };
}

/**
 * Runs `work` once for this incident, attempt and step; undefined when the event had nothing to do.
 * A step runs on an open incident, unless `runsIn` names the one state it runs in instead (the
 * replacement check, on an incident awaiting its replacement).
 */
export async function runStep<R>(
  deps: Deps,
  step: StepName,
  delivered: Delivered,
  work: StepWork<R>,
  options: { runsIn?: IncidentState } = {},
): Promise<R | undefined> {
  const ref = delivered.detail;
  const found = await deps.store.getIncident(ref.incidentId);
  if (!found) {
    deps.log.warn(`${step}: incident not found; event ignored`, { incidentId: ref.incidentId });
    return undefined;
  }
  const incident = await flushLeftOutbox(deps, found, delivered);
  const key = stepKey(step, ref.attempt);
  const holder = currentInvocation();
  const skip = whySkip(incident, options.runsIn ?? 'open', ref.attempt, key, deps.clock.now(), holder);
  if (skip) {
    deps.log.info(`${step}: ${skip}; event ignored`, { incidentId: incident.incidentId, attempt: ref.attempt, incidentAttempt: incident.attempt });
    return undefined;
  }
  // Unknown clusters fail the event before any write: nothing holds a lease that would never end.
  const cluster = await deps.directory.get(incident.clusterId);
  if (holder && incident.inFlight?.holder === holder && incident.inFlight.until > deps.clock.now()) {
    deps.log.warn(`${step}: Lambda retried the invocation that held this step (request ${holder}): it ended without a word, so its lease is taken over`, {
      incidentId: incident.incidentId,
      key: incident.inFlight.key,
    });
  }
  const held = await takeLease(deps, incident, key, stepBudgetMs(step, cluster.policy, incident.views.at(-1)?.members.length ?? 0), holder);
  if (!held) {
    deps.log.info(`${step}: another delivery took this step first; event ignored`, { incidentId: incident.incidentId, attempt: ref.attempt });
    return undefined;
  }
  let outcome: StepOutcome<R>;
  let committed: Incident;
  try {
    outcome = await work(held, cluster);
    if (cluster.policy.singleRemediator) outcome = singleRemediatorSaid(outcome, cluster.clusterId);
    committed = await commit(deps, outcome.incident, { ...outcome.patch, inFlight: null }, outcome.effects, key);
  } catch (error) {
    await releaseLease(deps, incident.incidentId, key);
    throw error;
  }
  await flushOutbox(deps, committed);
  return outcome.value;
}

/** Every message the step says (events, the decision kept, journal lines) carries the single-remediator note. */
function singleRemediatorSaid<R>(outcome: StepOutcome<R>, clusterId: string): StepOutcome<R> {
  const noted = <T>(value: T): T => {
    const said = value as { message?: unknown };
    return typeof said?.message === 'string' ? { ...value, message: withSingleRemediatorNote(said.message, clusterId) } : value;
  };
  const effects = outcome.effects.map((entry): OutboxEntry => {
    // The envelope keeps its type: only a string it already carries is changed.
    if (entry.kind === 'publish') return { ...entry, event: { ...entry.event, detail: noted(entry.event.detail) } as typeof entry.event };
    if (entry.kind === 'journal' && isDecisionLine(entry.entry)) {
      return { ...entry, entry: { ...entry.entry, detail: noted(entry.entry.detail) } };
    }
    return entry;
  });
  // An ending keeps its decision twice: as the last decision and as the incident's result.
  const patch = outcome.patch && {
    ...outcome.patch,
    ...(outcome.patch.lastDecision ? { lastDecision: noted(outcome.patch.lastDecision) } : {}),
    ...(outcome.patch.result !== undefined ? { result: noted(outcome.patch.result) } : {}),
  };
  return { ...outcome, effects, ...(patch ? { patch } : {}) };
}

function whySkip(incident: Incident, runsIn: IncidentState, attempt: number, key: string, now: number, holder: string | undefined): string | undefined {
  if (incident.state !== runsIn) return `the incident is ${incident.state}`;
  if (incident.attempt !== attempt) return `stale: the incident is at attempt ${incident.attempt}`;
  if (incident.stepsDone.includes(key)) return 'duplicate: this step is done at this attempt';
  // A lease held under this very request id was held by the try Lambda is now retrying: it ended.
  const heldByUs = holder !== undefined && incident.inFlight?.holder === holder;
  if (incident.inFlight && incident.inFlight.until > now && !heldByUs) return `duplicate: ${incident.inFlight.key} is running`;
  return undefined;
}

async function takeLease(deps: Deps, incident: Incident, key: string, leaseMs: number, holder: string | undefined): Promise<Incident | undefined> {
  const now = deps.clock.now();
  try {
    return await deps.store.updateIncident(
      incident.incidentId,
      { inFlight: { key, until: now + leaseMs, ...(holder ? { holder } : {}) } },
      { expectVersion: incident.version, now },
    );
  } catch (error) {
    if (error instanceof VersionConflictError) return undefined;
    throw error;
  }
}

/** Best effort: a lease that cannot be released lapses by itself. The step's own error is the one to report. */
async function releaseLease(deps: Deps, incidentId: string, key: string): Promise<void> {
  try {
    const current = await deps.store.getIncident(incidentId);
    if (current?.inFlight?.key !== key) return;
    await deps.store.updateIncident(incidentId, { inFlight: null }, { expectVersion: current.version, now: deps.clock.now() });
  } catch (error) {
    deps.log.warn('step lease not released; it lapses by itself', { incidentId, key, error: String(error) });
  }
}

/**
 * One conditional write: the patch, the outbox, and the step marked done at this attempt (a patch
 * that moves the incident to a new attempt starts that attempt's list afresh).
 */
export async function commit(
  deps: Pick<Deps, 'store' | 'clock'>,
  incident: Incident,
  patch: IncidentPatch,
  effects: OutboxEntry[],
  key?: string,
): Promise<Incident> {
  const newAttempt = patch.attempt !== undefined && patch.attempt !== incident.attempt;
  const stepsDone = newAttempt ? [] : key ? [...incident.stepsDone, key] : incident.stepsDone;
  return deps.store.updateIncident(
    incident.incidentId,
    { ...saidWithinLimits(patch), stepsDone, outbox: [...incident.outbox, ...effects.map(publishedWithinLimits)] },
    { expectVersion: incident.version, now: deps.clock.now() },
  );
}

/** Every event a step publishes says no more than its schema takes (core said-limits.ts). */
const publishedWithinLimits = (entry: OutboxEntry): OutboxEntry =>
  entry.kind === 'publish' ? { ...entry, event: { ...entry.event, detail: boundedSaid(entry.event.detail) } as typeof entry.event } : entry;

/** The decision the incident keeps, and its result, as bounded as the events that said them. */
const saidWithinLimits = (patch: IncidentPatch): IncidentPatch => ({
  ...patch,
  ...(patch.lastDecision ? { lastDecision: boundedSaid(patch.lastDecision) } : {}),
  ...(patch.result !== undefined ? { result: boundedSaid(patch.result) } : {}),
});

/**
 * Carries out the outbox this process just committed, then clears it. Anyone may do this:
 * publishing twice is safe, since every step ignores a duplicate. A conflict on clearing means
 * someone else moved the incident on.
 */
export const flushOutbox = (deps: OutboxDeps, incident: Incident): Promise<Incident> => carryOutOutbox(deps, incident, new Set());

/**
 * Carries out an outbox found on the incident, left by a commit whose process did not clear it
 * (it died, or its publish failed). It may have written some journal lines already: those are not
 * written twice (events and schedules may go twice; their consumers are idempotent, but a journal
 * is read by people). The event being handled is proof of its own delivery and is not published
 * again: were the clearing write to keep failing, each delivery would otherwise publish itself
 * anew, twice over.
 */
export async function flushLeftOutbox(deps: OutboxDeps, found: Incident, delivered?: Delivered): Promise<Incident> {
  if (found.outbox.length === 0) return found;
  const journaled = found.outbox.some((e) => e.kind === 'journal') ? new Set((await deps.store.journal(found.incidentId)).map(journalKey)) : new Set<string>();
  return carryOutOutbox(deps, found, journaled, delivered);
}

/** A line by what it says: one in the outbox and the same one read back from the journal key alike. */
const journalKey = (e: JournalInput): string => JSON.stringify([e.at, e.step, e.detail]);

async function carryOutOutbox(deps: OutboxDeps, incident: Incident, journaled: Set<string>, delivered?: Delivered): Promise<Incident> {
  if (incident.outbox.length === 0) return incident;
  for (const entry of incident.outbox) {
    if (delivered && isDelivered(entry, delivered)) continue;
    if (entry.kind === 'journal' && journaled.has(journalKey(entry.entry))) continue;
    await carryOut(deps, incident.incidentId, entry);
  }
  let cleared: Incident;
  try {
    cleared = await deps.store.updateIncident(incident.incidentId, { outbox: [] }, { expectVersion: incident.version, now: deps.clock.now() });
  } catch (error) {
    if (!(error instanceof VersionConflictError)) throw error;
    return (await deps.store.getIncident(incident.incidentId)) ?? incident;
  }
  // This write took these entries out of the outbox, and only one write can: said once, here.
  const events = incident.outbox.flatMap((e) => (e.kind === 'publish' ? [e.event] : []));
  if (events.length > 0) await deps.bus.settled?.(events);
  return cleared;
}

async function carryOut(deps: OutboxDeps, incidentId: string, entry: OutboxEntry): Promise<void> {
  switch (entry.kind) {
    case 'journal':
      return deps.store.appendJournal(incidentId, entry.entry);
    case 'schedule':
      return deps.scheduler.schedule(entry.request);
    case 'publish':
      return deps.bus.publish(entry.event);
  }
}

/** True for the outbox entry that produced the event being handled: published, or scheduled and fired. */
function isDelivered(entry: OutboxEntry, delivered: Delivered): boolean {
  const event = entry.kind === 'publish' ? entry.event : entry.kind === 'schedule' ? entry.request.event : undefined;
  const detail = event?.detail as Partial<Delivered['detail']> | undefined;
  return (
    event?.detailType === delivered.detailType &&
    detail?.incidentId === delivered.detail.incidentId &&
    detail.attempt === delivered.detail.attempt &&
    detail.at === delivered.detail.at
  );
}
