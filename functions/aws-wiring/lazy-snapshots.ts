// Remediate's snapshot store on AWS: the construct's bucket, named by SNAPSHOT_BUCKET, with the S3
// client loaded and built when the first snapshot is opened (snapshots-chunk.ts). A container that
// never takes one never loads it; no other function's bundle carries it.
import type { SnapshotStore } from '../ports/snapshots.ts';
import type { Env } from './env.ts';
import { lazyImport } from '../lib/lazy-import.ts';

/** Where under the bucket snapshots go: the remediate role may write there only. */
export const SNAPSHOT_PREFIX = 'snapshots/';

/**
 * The construct names its bucket to remediate only; without it a snapshot the policy requires
 * blocks with SNAPSHOT_FAILED, saying none is configured.
 */
export function snapshotsFromEnv(env: Env): { snapshots?: SnapshotStore } {
  const bucket = env.SNAPSHOT_BUCKET?.trim();
  if (!bucket) return {};
  const made = lazyImport(async () => {
    const chunk = await import('./snapshots-chunk.ts');
    return chunk.s3Snapshots(chunk.snapshotsClient(env), { bucket, prefix: SNAPSHOT_PREFIX });
  }).load;
  return { snapshots: { describe: `bucket ${bucket}`, open: async (subject) => (await made()).open(subject) } };
}
