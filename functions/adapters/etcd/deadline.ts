// A backstop for call deadlines: gRPC enforces the deadline itself, this only guards against a library
// path that forgets to (auth token exchange, a stream that never starts), so a caller is never left waiting.
import { EtcdCallError } from '../../ports/etcd.ts';

/** How long past the gRPC deadline the backstop waits before giving up on the library. */
export const BACKSTOP_GRACE_MS = 50;

export async function withinDeadline<T>(deadlineMs: number, run: (deadline: Date) => Promise<T>): Promise<T> {
  const deadline = new Date(Date.now() + Math.max(0, deadlineMs));
  let timer: NodeJS.Timeout | undefined;
  const backstop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new EtcdCallError({ kind: 'timeout', message: `no answer within the ${deadlineMs} ms deadline` }));
    }, Math.max(0, deadlineMs) + BACKSTOP_GRACE_MS);
  });
  try {
    return await Promise.race([run(deadline), backstop]);
  } finally {
    clearTimeout(timer);
  }
}
