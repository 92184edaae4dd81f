// What a remediation request reads to find its incident: only the incidents it can follow.
import type { Incident, IncidentStore } from '../../functions/ports/incident-store.ts';

/**
 * The cluster's open incidents and those written at or after `since` (when the request was made):
 * all that incidentOfRequest can pick, and never the cluster's whole history.
 */
export const incidentsSince = (store: Pick<IncidentStore, 'listIncidents'>, clusterId: string, since: number): Promise<Incident[]> =>
  store.listIncidents({ clusterId, openOrChangedSince: since });
