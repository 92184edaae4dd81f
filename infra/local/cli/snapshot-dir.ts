// Where snapshots before a removal go, as the user gave it (--snapshot-dir, a run config's
// snapshotDir): refused at start when it cannot be a directory, rather than at the first removal.
import fs from 'node:fs';
import path from 'node:path';

/** The directory resolved against `base`; `refuse` makes the error naming where it was given. */
export function snapshotDirFrom(given: string, base: string, refuse: (problem: string) => Error): string {
  if (given.trim() === '') throw refuse('must name a directory');
  const dir = path.resolve(base, given);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(dir);
  } catch {
    // Not there yet: the store creates it, 0700, with the first snapshot.
    return dir;
  }
  if (!stat.isDirectory()) throw refuse(`${dir} is not a directory`);
  return dir;
}
