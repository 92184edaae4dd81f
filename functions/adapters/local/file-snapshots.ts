// Snapshots before removal, as files: <directory>/<cluster>/<incident>-<member>.db, the directories
// 0700 and the files 0600 (a snapshot holds every key, secrets included). A snapshot is written as
// .partial, flushed to disk, and renamed into place only once whole, so a file named .db is always
// one etcd streamed to the end. Each cluster keeps its newest few, so a storm of removals cannot
// fill the disk.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { SnapshotKept } from '../../core/recovery/index.ts';
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
      await makeDirectory(clusterDir);
      const location = path.join(clusterDir, `${safe(incidentId)}-${safe(member)}${SNAPSHOT_SUFFIX}`);
      const partial = `${location}${PARTIAL_SUFFIX}`;
      // A partial left by a run that crashed is ours (the name holds the incident): start afresh.
      await fs.promises.rm(partial, { force: true });
      // Opened here, so a directory we cannot write is said before etcd is asked for anything.
      const handle = await fs.promises.open(partial, 'wx', 0o600).catch((error: unknown) => {
        const cause = unwritableDirectory(clusterDir);
        throw cause === undefined ? error : new Error(`cannot write the snapshot ${partial}: ${cause}`, { cause: error });
      });
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

/** What an errno says of a directory that cannot be written. */
const UNWRITABLE: Readonly<Record<string, string>> = {
  EROFS: 'is on a read-only file system',
  EACCES: 'is not writable: permission denied',
  EPERM: 'is not writable: operation not permitted',
};

/**
 * Why `directory` cannot hold snapshots, or undefined when it can: it, or the nearest folder above
 * it that exists (where it would be made), is not a directory or cannot be written. Each names the
 * folder at fault.
 */
export function unwritableDirectory(directory: string): string | undefined {
  let at = path.resolve(directory);
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  if (!fs.statSync(at).isDirectory()) return `${at} is not a directory`;
  try {
    fs.accessSync(at, fs.constants.W_OK | fs.constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    return `${at} ${UNWRITABLE[code] ?? `cannot be written (${code || String(error)})`}`;
  }
}

/**
 * mkdir -p, 0700, failing with the real cause: Node's recursive mkdir says ENOENT when a folder on
 * the way cannot be written (read-only, no permission), which reads as a path that is not there.
 */
async function makeDirectory(directory: string): Promise<void> {
  try {
    await fs.promises.mkdir(directory, { recursive: true, mode: 0o700 });
  } catch (error) {
    const cause = unwritableDirectory(directory);
    if (cause === undefined) throw error;
    throw new Error(`cannot make the snapshot directory ${directory}: ${cause}`, { cause: error });
  }
}

/** The snapshots kept for a cluster, newest first: their files and when each was written. */
async function keptIn(clusterDir: string): Promise<{ file: string; mtimeMs: number; size: number }[]> {
  const names = await fs.promises.readdir(clusterDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const files = await Promise.all(
    names
      .filter((n) => n.endsWith(SNAPSHOT_SUFFIX))
      .map(async (n) => {
        const stat = await fs.promises.stat(path.join(clusterDir, n));
        return { file: path.join(clusterDir, n), mtimeMs: stat.mtimeMs, size: stat.size };
      }),
  );
  return files.sort((a, b) => b.mtimeMs - a.mtimeMs || b.file.localeCompare(a.file));
}

/**
 * The newest snapshot kept for `clusterId` in `directory`, with its size and SHA-256 (read from
 * the file, as a person checks it before a restore); undefined when none was kept.
 */
export async function newestSnapshot(directory: string, clusterId: string): Promise<SnapshotKept | undefined> {
  const newest = (await keptIn(path.join(directory, safe(clusterId))))[0];
  if (!newest) return undefined;
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(newest.file), hash);
  return { location: newest.file, bytes: newest.size, sha256: hash.digest('hex'), takenAt: newest.mtimeMs };
}

/** Leaves the newest `keep` snapshots of a cluster, never deleting the one just taken. */
async function pruneOlder(clusterDir: string, taken: string, keep: number): Promise<void> {
  const older = (await keptIn(clusterDir)).filter((f) => f.file !== taken);
  for (const { file } of older.slice(Math.max(0, keep - 1))) await fs.promises.rm(file, { force: true });
}
