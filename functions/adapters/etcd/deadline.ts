// A backstop for call deadlines: gRPC enforces the deadline itself, this only guards against a library
// path that forgets to (auth token exchange, a stream that never starts), so a caller is never left waiting.
import { EtcdCallError } from '../../ports/etcd.ts';
import { withTimeout } from '../../lib/with-timeout.ts';

/** How long past the gRPC deadline the backstop waits before giving up on the library. */
export const BACKSTOP_GRACE_MS = 50;

export async function withinDeadline<T>(deadlineMs: number, run: (deadline: Date) => Promise<T>): Promise<T> {
  const deadline = new Date(Date.now() + Math.max(0, deadlineMs));
  return withTimeout(
    Math.max(0, deadlineMs) + BACKSTOP_GRACE_MS,
    () => run(deadline),
    () => new EtcdCallError({ kind: 'timeout', message: `no answer within the ${deadlineMs} ms deadline` }),
  );
}
