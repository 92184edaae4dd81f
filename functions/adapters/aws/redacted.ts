// Kept apart from secrets.ts, which imports the Secrets Manager client: the directory redacts the
// entries it builds, and must not load that client with it (functions/aws-wiring/lazy-secrets.ts).
import { inspect } from 'node:util';

/** Should anyone log credentials (or a cluster entry holding them), they print as `shown`. */
export function redacted<T extends object>(value: T, shown: string): T {
  Object.defineProperty(value, 'toJSON', { value: () => shown, enumerable: false });
  Object.defineProperty(value, inspect.custom, { value: () => shown, enumerable: false });
  return value;
}
