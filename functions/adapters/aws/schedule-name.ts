// EventBridge Scheduler names allow [0-9a-zA-Z-_.]{1,64}. A request name that fits is used as it
// is; any other is cleaned, cut and given a hash of the original, so two request names never
// share a schedule and the same request name always finds its own.
import { createHash } from 'node:crypto';

export const MAX_SCHEDULE_NAME = 64;
const NOT_ALLOWED = /[^0-9a-zA-Z\-_.]/g;
const HASH_CHARS = 12;

export function scheduleName(requestName: string): string {
  const clean = requestName.replace(NOT_ALLOWED, '_');
  if (clean === requestName && clean.length > 0 && clean.length <= MAX_SCHEDULE_NAME) return clean;
  const hash = createHash('sha256').update(requestName).digest('hex').slice(0, HASH_CHARS);
  return `${clean.slice(0, MAX_SCHEDULE_NAME - HASH_CHARS - 1)}-${hash}`;
}
