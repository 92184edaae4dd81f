// Which incident a remediation request follows: the one its report opened, or the one that holds
// its Machine's etcd member (a report of the same member by another name joins that one, and a
// remediation of it that ended after the request was made replaced its Machine). Pure.
import { askedForMachine, namesSameMember } from '../../functions/core/incident/index.ts';
import { describeSelector, targetKeyOf } from '../../functions/core/view/index.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';

export const requestTargetKey = (machineName: string): string => targetKeyOf({ machineName });

/** Opened by a report of this request's Machine (by any earlier report of it too). */
export const isOwnIncident = (machineName: string, incident: Pick<Incident, 'targetKey'>): boolean => incident.targetKey === requestTargetKey(machineName);

/** The newest incident opened for the Machine at or after `since`, or (`holders`) one that holds its member. */
export function incidentOfRequest(incidents: readonly Incident[], machineName: string, since: number, holders = true): Incident | undefined {
  const own = incidents.filter((i) => isOwnIncident(machineName, i) && i.openedAt >= since);
  if (!holders) return own.sort((a, b) => b.openedAt - a.openedAt)[0];
  const holding = incidents.filter(
    (i) => !isOwnIncident(machineName, i) && (i.state === 'open' || (askedForMachine(i.state) && i.updatedAt >= since)) && namesSameMember({ machineName }, i),
  );
  return [...own, ...holding].sort((a, b) => b.openedAt - a.openedAt)[0];
}

/** What a request's status says while it follows another report's incident: whose, and why. */
export const followedInHolder = (holder: Pick<Incident, 'incidentId' | 'target'>, message: string | undefined): string =>
  `Incident ${holder.incidentId} (reported as ${describeSelector(holder.target)}) holds this Machine's etcd member; this request follows it${message ? `: ${message}` : ''}`;
