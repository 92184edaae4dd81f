// The backstop for a chain cut off by a crash: an open incident that owes nothing, runs nothing,
// has nothing scheduled for its current attempt and has been quiet a while is resumed at its next
// attempt. The local runtime runs it at start-up and on an interval; on AWS a scheduled rule would.
import { pastIncidentDeadline, stalledPastDeadline } from '../../core/waits/index.ts';
import { stallWindowMs } from '../../core/budget/index.ts';
import { VersionConflictError, type Incident } from '../../ports/incident-store.ts';
import { resumedCheck } from '../replacement/index.ts';
import { blockEffects, type Deps, commit, flushLeftOutbox, flushOutbox } from '../common/index.ts';
import { advanceAttempt } from './schedule-retry.ts';

/**
 * Resumes at the next attempt, as schedule-retry would: the cut-off attempt may hold a lease that
 * nothing will release. A conflict means the incident moved on by itself: nothing to resume.
 */
export async function resumeIncident(deps: Deps, incident: Incident, at: number): Promise<boolean> {
  try {
    const advance = advanceAttempt(incident, { reason: 'RUNTIME_RESUMED', at, reprobeNow: false, kind: 'resume' }, deps.clock.now());
    await flushOutbox(deps, await commit(deps, incident, advance.patch, advance.effects));
    return true;
  } catch (error) {
    if (error instanceof VersionConflictError) return false;
    throw error;
  }
}

export interface SweepOptions {
  /** True when a timer will deliver this incident's current attempt. */
  isArmed: (incident: Incident) => boolean;
  /** How long an incident must have been unchanged to count as stalled; 0 at start-up. */
  quietMs: number | ((incident: Incident) => Promise<number>);
  /** At start-up no step of this process runs, so a lease left by a crash counts for nothing. */
  ignoreLeases?: boolean;
  /**
   * Block, rather than resume, an incident past its deadline. A failed step's last delivery is
   * handled (stepFailed: the local runtime's bus, AWS's on-failure destination) and bounds the
   * loop; where timers cannot be listed (AWS) the sweep must too, for the failures that path itself
   * lost (its own tries spent), or a step that always fails would be resumed for ever.
   */
  endPastDeadline?: boolean;
}

/** Carries out every open incident's outbox and resumes the stalled ones; returns how many it resumed. */
export async function sweepStalled(deps: Deps, { isArmed, quietMs, ignoreLeases = false, endPastDeadline = false }: SweepOptions): Promise<number> {
  let resumed = 0;
  for (const found of await deps.store.listIncidents({ state: 'open' })) {
    const now = deps.clock.now();
    const incident = await flushLeftOutbox(deps, found);
    if (incident.state !== 'open' || isArmed(incident)) continue;
    if (!ignoreLeases && incident.inFlight && incident.inFlight.until > now) continue;
    if (now - incident.updatedAt < (typeof quietMs === 'number' ? quietMs : await quietMs(incident))) continue;
    // A chain that keeps stalling must not be resumed for ever: past its deadline, it ends here.
    if (endPastDeadline && (await endedPastDeadline(deps, incident, now))) continue;
    if (await resumeIncident(deps, incident, now)) resumed++;
  }
  return resumed + (await sweepReplacementChecks(deps, { isArmed, quietMs, ignoreLeases }));
}

/**
 * An incident awaiting its replacement is checked on a chain of RetryDue of its own: one cut off
 * (lost, or its step failed for good) would leave it awaiting for ever, so it is checked again.
 */
async function sweepReplacementChecks(
  deps: Deps,
  { isArmed, quietMs, ignoreLeases }: Pick<Required<SweepOptions>, 'isArmed' | 'quietMs' | 'ignoreLeases'>,
): Promise<number> {
  let resumed = 0;
  for (const found of await deps.store.listIncidents({ state: 'awaiting-replacement' })) {
    const now = deps.clock.now();
    const incident = await flushLeftOutbox(deps, found);
    if (incident.state !== 'awaiting-replacement' || isArmed(incident)) continue;
    if (!ignoreLeases && incident.inFlight && incident.inFlight.until > now) continue;
    if (now - incident.updatedAt < (typeof quietMs === 'number' ? quietMs : await quietMs(incident))) continue;
    const check = resumedCheck(incident, await deps.store.journal(incident.incidentId), now);
    if (!check) continue;
    try {
      await flushOutbox(deps, await commit(deps, incident, check.patch, check.effects));
      resumed++;
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
    }
  }
  return resumed;
}

async function endedPastDeadline(deps: Deps, incident: Incident, now: number): Promise<boolean> {
  const cluster = await deps.directory.get(incident.clusterId).catch(() => undefined);
  if (!cluster || !pastIncidentDeadline(incident.openedAt, now, cluster.policy)) return false;
  const stalled = {
    incidentId: incident.incidentId,
    name: incident.memberName || incident.targetKey,
    updatedAt: incident.updatedAt,
    attempt: incident.attempt,
  };
  const decision = stalledPastDeadline(stalled, cluster.policy);
  const { patch, effects } = blockEffects(incident, decision, 'sweep', now);
  try {
    await flushOutbox(deps, await commit(deps, incident, patch, effects));
    return true;
  } catch (error) {
    if (error instanceof VersionConflictError) return true;
    throw error;
  }
}

/**
 * The sweep where timers cannot be listed (EventBridge Scheduler, SQS delays): an incident counts
 * as stalled once unchanged for longer than any wait or step of its cluster's policy. A resume of
 * one that was only waiting shortens its wait, nothing more: the late RetryDue is then stale.
 */
export async function sweepBlind(deps: Deps): Promise<number> {
  return sweepStalled(deps, {
    isArmed: () => false,
    endPastDeadline: true,
    // A cluster no longer in the directory is not this sweep's to resume.
    quietMs: async (incident) =>
      deps.directory.get(incident.clusterId).then(
        (c) => stallWindowMs(c.policy),
        () => Number.POSITIVE_INFINITY,
      ),
  });
}
