// The snapshot store of a pipeline function on AWS: the construct's bucket, named by
// SNAPSHOT_BUCKET, with the S3 client loaded and built when the first snapshot is opened
// (snapshots-chunk.ts). A container that never takes one never loads it.
import type { SnapshotStore } from '../ports/snapshots.ts';
import type { Env } from './env.ts';
// Types only: erased from the build, so the chunk stays out of index.mjs.
import type * as SnapshotsChunkModule from './snapshots-chunk.ts';
import { lazyImport } from './lazy-import.ts';

type Chunk = typeof SnapshotsChunkModule;

/** Where under the bucket snapshots go: the remediate role may write there only. */
export const SNAPSHOT_PREFIX = 'snapshots/';

export function lazySnapshots(env: Env, bucket: string, load: () => Promise<Chunk> = () => import('./snapshots-chunk.ts')): SnapshotStore {
  const made = lazyImport(async () => {
    const chunk = await load();
    return chunk.s3Snapshots(chunk.snapshotsClient(env), { bucket, prefix: SNAPSHOT_PREFIX });
  }).load;
  return {
    describe: `bucket ${bucket}`,
    open: async (subject) => (await made()).open(subject),
  };
}
