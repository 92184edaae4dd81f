// The snapshot before a removal, pure: what the tries said becomes a decision (when the policy
// requires a snapshot) or a journal line (when it does not), in sentences a person can act on.
import { classifyFailure, type Decision, decidedBy, type EtcdFailure, type PathName } from '../common/index.ts';
import { retryAfterBackoff } from '../waits/index.ts';

/**
 * Tries after a transient etcd failure (a timeout, no leader, a stream cut short) before the
 * removal blocks: a member busy compacting or a leader election passes in seconds, and blocking
 * on it would leave a sick member in place for a person to find. Two, since each retry spends an
 * attempt and waits the backoff. A store's failure (a full disk, a refused bucket) is never
 * retried: nothing but a person fixes it.
 */
export const SNAPSHOT_TRANSIENT_RETRIES = 2;

/** One member's try over one path, and what etcd (or the stream) said. */
export interface SnapshotTry {
  member: string;
  path: PathName;
  endpoint: string;
  failure: EtcdFailure;
}

export type SnapshotFailure =
  /** No store is configured where the policy asks for a snapshot. */
  | { kind: 'no-store' }
  /** Where the snapshot goes refused it: `store` names it (a directory, a bucket). */
  | { kind: 'store'; store: string; said: string; tries: SnapshotTry[] }
  /** Every healthy member failed to stream it (none tried: no healthy member). */
  | { kind: 'members'; tries: SnapshotTry[] };

/** What a try over the exec relay says: it runs etcdctl in a pod, and has no stream to hand back. */
export const SNAPSHOT_NOT_OVER_RELAY = 'the exec relay streams no snapshot; give the cluster a direct or port-forward path';

/**
 * Transient: etcd itself failed on every try, each failure of a kind that passes by itself. A
 * member reached only over the exec relay never passes: no retry gives it a stream.
 */
export const isTransient = (failure: SnapshotFailure): boolean =>
  failure.kind === 'members' &&
  failure.tries.length > 0 &&
  failure.tries.every((t) => t.path !== 'exec-relay' && classifyFailure(t.failure).category === 'transient');

const describeTries = (tries: readonly SnapshotTry[]): string =>
  tries.map((t) => `${t.member} over ${t.path} ${t.endpoint} said "${t.failure.message}"`).join('; ');

/** What went wrong, in one clause: each member tried, over which path, and what it said. */
export function describeSnapshotFailure(failure: SnapshotFailure): string {
  switch (failure.kind) {
    case 'no-store':
      return 'no snapshot store is configured';
    case 'store': {
      const before = failure.tries.length ? ` (after ${describeTries(failure.tries)})` : '';
      return `the snapshot store ${failure.store} refused it: ${failure.said}${before}`;
    }
    case 'members':
      return failure.tries.length ? describeTries(failure.tries) : 'no healthy member other than the target answers, so none could stream it';
  }
}

/** What a person should do about it. */
function advice(failure: SnapshotFailure): string {
  const orSkip = "or set the policy's snapshotRequired to false to remove without one";
  switch (failure.kind) {
    case 'no-store':
      return `Configure where snapshots go (--snapshot-dir locally, the construct's bucket on AWS), ${orSkip}`;
    case 'store':
      return `Fix the store (free disk space or make the directory writable; on AWS, check the bucket and the remediate role's access to it), ${orSkip}`;
    case 'members':
      return `Check the members named (disk, load, snapshotTimeoutMs for a large keyspace), ${orSkip}`;
  }
}

export interface SnapshotRetryFacts {
  /** Transient failures journaled before this one. */
  earlierTransient: number;
  retryAt: number;
}

/**
 * SNAPSHOT_FAILED with the policy requiring a snapshot: nothing is removed. A transient failure
 * is tried again after the backoff, up to SNAPSHOT_TRANSIENT_RETRIES times; any other blocks.
 */
export function snapshotFailed(name: string, failure: SnapshotFailure, facts: SnapshotRetryFacts): Decision {
  const what = `No snapshot could be taken before removing ${name}: ${describeSnapshotFailure(failure)}; nothing was removed`;
  const evidence = { snapshot: failure.kind, tries: 'tries' in failure ? failure.tries.length : 0 };
  if (isTransient(failure) && facts.earlierTransient < SNAPSHOT_TRANSIENT_RETRIES) {
    const tryNo = facts.earlierTransient + 1;
    return decidedBy(
      retryAfterBackoff(
        'SNAPSHOT_FAILED',
        facts.retryAt,
        (when) => `${what}, and etcd's failure passes by itself, so we try again at ${when} (retry ${tryNo} of ${SNAPSHOT_TRANSIENT_RETRIES}).`,
        {
          ...evidence,
          transientRetry: tryNo,
        },
      ),
      'snapshot-before-remove',
    );
  }
  const tried = isTransient(failure) ? ` after ${SNAPSHOT_TRANSIENT_RETRIES + 1} tries` : '';
  return decidedBy(
    { kind: 'block', reason: 'SNAPSHOT_FAILED', message: `${what}${tried}; blocked. ${advice(failure)}, then report the member again.`, evidence },
    'snapshot-before-remove',
  );
}
