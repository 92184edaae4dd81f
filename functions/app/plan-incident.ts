// The planner's input, as an incident and its cluster give it.
import type { Decision } from '../core/decision.ts';
import { plan } from '../core/plan.ts';
import type { RemediationHistory } from '../ports/incident-store.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import type { Incident } from '../ports/incident-store.ts';
import type { Deps } from './deps.ts';

/** Attempts of the budget spent: every retry but those that only waited. */
export const attemptsSpent = (incident: Incident): number => incident.attempt - incident.waits;

export function planIncident(deps: Deps, cluster: ClusterEntry, incident: Incident, remediation: RemediationHistory): Decision {
  return plan({
    samples: incident.views,
    targetId: incident.memberId!,
    incident: {
      openedAt: incident.openedAt,
      attempt: attemptsSpent(incident),
      immediateReprobes: incident.immediateReprobes,
      ...(incident.leaderUnreachable ? { leaderUnreachable: incident.leaderUnreachable } : {}),
    },
    remediation,
    policy: cluster.policy,
    now: deps.clock.now(),
    random: deps.random,
  });
}
