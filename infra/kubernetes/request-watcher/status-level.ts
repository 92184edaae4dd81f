// The level a request's status is compared at: what it shows, what a write would make of it, and
// whether the two differ. Pure.
import type { RequestStatus } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { followedInHolder } from '../request-incident.ts';
import type { Said, Tracked } from './tracked.ts';

/** What a new report of a request leaves behind of the status before it: nothing of its incident. */
export const BEFORE_REPORT: readonly (keyof RequestStatus)[] = ['reasonCode', 'incidentId', 'leaderMove', 'startedAt', 'completedAt'];

/** The fields a status is compared on: its conditions follow from them, its updatedAt from the write. */
export const STATUS_FIELDS = ['phase', 'reasonCode', 'message', 'incidentId', 'leaderMove', 'startedAt', 'completedAt', 'observedGeneration'] as const;

/** What a request shows once `status` is merged into it, and `clear` deleted from it. */
export function merged(shown: Said | undefined, status: Said, clear: readonly (keyof RequestStatus)[]): Said {
  const next: Record<string, unknown> = { ...shown, ...status };
  for (const key of clear) if ((status as Partial<RequestStatus>)[key] === undefined) delete next[key];
  return next as Said;
}

export const sameStatus = (a: Said, b: Said): boolean => STATUS_FIELDS.every((key) => a[key] === b[key]);

/** The status a request shows, as the API server gave it. */
export function shownOf(status: Partial<RequestStatus> | undefined): Said | undefined {
  if (!status?.phase) return undefined;
  const fields = STATUS_FIELDS.flatMap((key) => (status[key] === undefined ? [] : [[key, status[key]]]));
  return Object.fromEntries(fields) as Said;
}

/** What holds a replacement, as the request, its Event and the incident's journal say it. */
export const notCome = (hold: string): string => `The replacement has not come: ${hold}.`;

/**
 * A status of the incident followed, saying whose it is when it is another report's, and, while
 * it awaits its replacement, what holds that replacement in Cluster API's words.
 */
export const said = (entry: Tracked, status: Said): Said => {
  const whose = entry.holder ? { ...status, message: followedInHolder(entry.holder, status.message) } : status;
  return whose.phase === 'AwaitingReplacement' && entry.replacementHeld
    ? { ...whose, message: `${whose.message ?? ''} ${notCome(entry.replacementHeld)}`.trim() }
    : whose;
};
