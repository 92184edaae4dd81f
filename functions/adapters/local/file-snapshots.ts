// Snapshots before removal, as files: <directory>/<cluster>/<incident>-<member>.db, the directories
// 0700 and the files 0600 (a snapshot holds every key, secrets included). A snapshot is written as
// .partial, flushed to disk, and renamed into place only once whole, so a file named .db is always
// one etcd streamed to the end. Each cluster keeps its newest few, so a storm of removals cannot
// fill the disk.
import fs from 'node:fs';
import path from 'node:path';
import type { SnapshotStore } from '../../ports/snapshots.ts';

/** How many snapshots a cluster keeps: enough to go back past a few removals in a row. */
export const SNAPSHOTS_KEPT_PER_CLUSTER = 5;

const SNAPSHOT_SUFFIX = '.db';
const PARTIAL_SUFFIX = '.partial';

const safe = (name: string): string => name.replace(/[^\w.-]/g, '_').replace(/^\.+/, '_');

export function fileSnapshots(directory: string, kept = SNAPSHOTS_KEPT_PER_CLUSTER): SnapshotStore {
  return {
    describe: `directory ${directory}`,
    async open({ clusterId, incidentId, member }) {
      const clusterDir = path.join(directory, safe(clusterId));
      await fs.promises.mkdir(clusterDir, { recursive: true, mode: 0o700 });
      const location = path.join(clusterDir, `${safe(incidentId)}-${safe(member)}${SNAPSHOT_SUFFIX}`);
      const partial = `${location}${PARTIAL_SUFFIX}`;
      // A partial left by a run that crashed is ours (the name holds the incident): start afresh.
      await fs.promises.rm(partial, { force: true });
      // Opened here, so a directory we cannot write is said before etcd is asked for anything.
      const handle = await fs.promises.open(partial, 'wx', 0o600);
      return {
        stream: fs.createWriteStream('', { fd: handle, flush: true }),
        location,
        async keep() {
          await fs.promises.rename(partial, location);
          await pruneOlder(clusterDir, location, kept);
        },
        discard: () => fs.promises.rm(partial, { force: true }),
      };
    },
  };
}

/** Leaves the newest `keep` snapshots of a cluster, never deleting the one just taken. */
async function pruneOlder(clusterDir: string, taken: string, keep: number): Promise<void> {
  const names = (await fs.promises.readdir(clusterDir)).filter((n) => n.endsWith(SNAPSHOT_SUFFIX));
  const files = await Promise.all(names.map(async (n) => ({ file: path.join(clusterDir, n), mtimeMs: (await fs.promises.stat(path.join(clusterDir, n))).mtimeMs })));
  const older = files.filter((f) => f.file !== taken).sort((a, b) => b.mtimeMs - a.mtimeMs || b.file.localeCompare(a.file));
  for (const { file } of older.slice(Math.max(0, keep - 1))) await fs.promises.rm(file, { force: true });
}
