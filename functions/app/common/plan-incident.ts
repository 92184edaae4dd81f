// The planner's input, as an incident and its cluster give it.
import type { Decision } from '../../core/common/index.ts';
import type { FleetFacts } from '../../core/fleet/index.ts';
import { defragmentationInFlight, defragmentationSpans } from '../../core/maintenance/index.ts';
import { plan, type PlanInput } from '../../core/plan/index.ts';
import { describeSelector } from '../../core/view/index.ts';
import type { RemediationHistory } from '../../core/removal/index.ts';
import { waitsInARowAfter, backoffRetryAt } from '../../core/waits/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import type { Incident } from '../../ports/incident-store.ts';
import type { Deps } from './deps.ts';

/** Attempts of the budget spent: every retry but those that only waited. */
export const attemptsSpent = (incident: Incident): number => incident.attempt - incident.waits;

/** When a retry after the incident's backoff runs, from now. */
export const nextTryAt = (deps: Pick<Deps, 'clock' | 'random'>, cluster: ClusterEntry, incident: Incident): number =>
  backoffRetryAt({ now: deps.clock.now(), attempt: attemptsSpent(incident), policy: cluster.policy, random: deps.random });

/** The cluster's maintenance as the planner reads it: the last run ended, a defragmentation claimed now, and when the run stalled each member. */
export async function maintenanceFacts(deps: Deps, clusterId: string): Promise<PlanInput['maintenance']> {
  const record = (await deps.store.maintenanceRecord(clusterId))?.record;
  const now = deps.clock.now();
  const inFlight = defragmentationInFlight(record, now);
  const spans = defragmentationSpans(record, now);
  return { ...(record?.lastRun ? { lastRun: record.lastRun } : {}), ...(inFlight ? { inFlight } : {}), ...(spans.length > 0 ? { spans } : {}) };
}

/** Targets of the cluster's other open incidents: leadership must never be handed to one of them. */
export async function membersUnderRemediation(deps: Deps, incident: Incident): Promise<string[]> {
  const open = await deps.store.listIncidents({ clusterId: incident.clusterId, state: 'open' });
  return open.flatMap((other) => (other.incidentId !== incident.incidentId && other.memberId ? [other.memberId] : []));
}

export function planIncident(
  deps: Deps,
  cluster: ClusterEntry,
  incident: Incident,
  remediation: RemediationHistory,
  excludeCandidates: string[] = [],
  fleet?: FleetFacts,
  maintenance?: PlanInput['maintenance'],
): Decision {
  return plan({
    ...(fleet ? { fleet: { clusterId: incident.clusterId, facts: fleet, lastDecision: incident.lastDecision } } : {}),
    ...(maintenance ? { maintenance } : {}),
    samples: incident.views,
    // Unresolved only when no member list answered: the planner then judges the cluster unreachable.
    targetId: incident.memberId ?? describeSelector(incident.target),
    incident: {
      openedAt: incident.openedAt,
      attempt: attemptsSpent(incident),
      immediateReprobes: incident.immediateReprobes,
      ...(incident.leaderUnreachable ? { leaderUnreachable: incident.leaderUnreachable } : {}),
      ...(excludeCandidates.length > 0 ? { excludeCandidates } : {}),
      waitsInARow: waitsInARowAfter(incident.lastDecision),
    },
    remediation,
    policy: cluster.policy,
    now: deps.clock.now(),
    random: deps.random,
  });
}
