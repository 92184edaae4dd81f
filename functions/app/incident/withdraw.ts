// A report withdrawn before any removal began (a MachineHealthCheck deletes its request once the
// Machine is healthy again, or Cluster API stops acting on the Machine) stops its incident, saying
// so. Once removal is approved, remediate owns the incident: it re-checks every gate under the
// lock, and a withdrawal is too late.
import type { Decision } from '../../core/common/index.ts';
import { VersionConflictError, type Incident } from '../../ports/incident-store.ts';
import { closeEffects, commit, flushOutbox, type OutboxDeps } from '../common/index.ts';

export type WithdrawOutcome =
  | { kind: 'withdrawn'; incident: Incident }
  /** Removal was approved or is running: the incident goes on. */
  | { kind: 'too-late'; why: string }
  /** A step holds the incident now; ask again once it is done. */
  | { kind: 'busy' }
  | { kind: 'closed'; state: Incident['state'] }
  | { kind: 'unknown' };

function removalUnderWay(incident: Incident, now: number): string | undefined {
  if (incident.lastDecision?.kind === 'approve') return `removal was approved (${incident.lastDecision.reason}) and is under way`;
  if (incident.stepsDone.some((step) => step.startsWith('remediate@'))) return 'the remediate step has run';
  if (incident.inFlight?.key.startsWith('remediate@') && incident.inFlight.until > now) return 'the remediate step is running';
  return undefined;
}

/** Why a report is withdrawn, and what comes next, in the close's words. */
export interface Withdrawal {
  reason: Extract<Decision['reason'], 'REQUEST_WITHDRAWN' | 'CLUSTER_PAUSED' | 'REMEDIATION_NOT_ALLOWED' | 'COMPETING_REMEDIATION'>;
  next: string;
}

const requestDeleted: Withdrawal = { reason: 'REQUEST_WITHDRAWN', next: 'Report the member again if it is still sick.' };

export async function withdrawIncident(deps: OutboxDeps, incidentId: string, why: string, withdrawal: Withdrawal = requestDeleted): Promise<WithdrawOutcome> {
  const incident = await deps.store.getIncident(incidentId);
  if (!incident) return { kind: 'unknown' };
  if (incident.state !== 'open') return { kind: 'closed', state: incident.state };
  const now = deps.clock.now();
  const late = removalUnderWay(incident, now);
  if (late) return { kind: 'too-late', why: late };
  if (incident.inFlight && incident.inFlight.until > now) return { kind: 'busy' };
  const decision: Extract<Decision, { kind: 'close' }> = {
    kind: 'close',
    reason: withdrawal.reason,
    message: `${why}; the incident stops before any removal, and nothing was removed. ${withdrawal.next}`,
    evidence: { withdrawnAt: new Date(now).toISOString(), why },
  };
  const { patch, effects } = closeEffects(incident, decision, 'withdraw', now);
  try {
    const closed = await commit(deps, incident, patch, effects);
    return { kind: 'withdrawn', incident: await flushOutbox(deps, closed) };
  } catch (error) {
    // A step wrote first: look again later, it may have approved removal meanwhile.
    if (error instanceof VersionConflictError) return { kind: 'busy' };
    throw error;
  }
}
