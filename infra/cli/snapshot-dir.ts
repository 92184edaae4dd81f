// Where snapshots before a removal go, as the user gave it (--snapshot-dir, a run config's
// snapshotDir): refused at start when it cannot be a directory or cannot be written, rather than
// at the first removal.
import fs from 'node:fs';
import path from 'node:path';
import { unwritableDirectory } from '../../functions/adapters/local/file-snapshots.ts';

/** The directory resolved against `base`; `refuse` makes the error naming where it was given. */
export function snapshotDirFrom(given: string, base: string, refuse: (problem: string) => Error): string {
  if (given.trim() === '') throw refuse('must name a directory');
  const dir = path.resolve(base, given);
  const exists = fs.existsSync(dir);
  if (exists && !fs.statSync(dir).isDirectory()) throw refuse(`${dir} is not a directory`);
  // Not there yet: the store creates it, 0700, with the first snapshot, in the folder found here.
  const cause = unwritableDirectory(dir);
  if (cause !== undefined) throw refuse(exists ? cause : `${dir} cannot be made: ${cause}`);
  return dir;
}
