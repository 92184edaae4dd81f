// The planner's input, as an incident and its cluster give it.
import type { Decision } from '../../core/common/index.ts';
import type { FleetFacts } from '../../core/fleet/index.ts';
import type { MaintenanceRunEnded } from '../../core/maintenance/index.ts';
import { plan } from '../../core/plan/index.ts';
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
  maintenance?: MaintenanceRunEnded,
): Decision {
  return plan({
    ...(fleet ? { fleet: { clusterId: incident.clusterId, facts: fleet, lastDecision: incident.lastDecision } } : {}),
    ...(maintenance ? { maintenance: { lastRun: maintenance } } : {}),
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
