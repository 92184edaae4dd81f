// A real full disk for the state file: a small tmpfs mounted for the test, filled to the last
// byte by a filler file and freed by removing it. Mounting needs root (CAP_SYS_ADMIN); where it
// is refused, `fullDiskUnavailable` says why, and only then are the tests that need it skipped.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface SmallDisk {
  /** The mount point: files made here live on the small disk. */
  readonly dir: string;
  /** Writes a filler until the disk takes not one byte more. */
  fill(): void;
  /** Removes the filler: the space is back. */
  free(): void;
  /** Unmounts (lazily, so a process still holding a file there cannot block it) and removes the mount point. */
  remove(): void;
}

function mount(sizeMb: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    return dir;
  } catch (error) {
    fs.rmdirSync(dir);
    throw error;
  }
}

/** Why no small disk can be mounted here, or undefined when it can. Checked once, by trying. */
export const fullDiskUnavailable: string | undefined = (() => {
  try {
    const dir = mount(1);
    execFileSync('umount', [dir]);
    fs.rmdirSync(dir);
    return undefined;
  } catch (error) {
    const said = error instanceof Error && 'stderr' in error ? String(error.stderr).trim() : String(error);
    return `cannot mount a tmpfs to fill (needs root with CAP_SYS_ADMIN): ${said || 'mount failed'}`;
  }
})();

export function smallDisk(sizeMb = 4): SmallDisk {
  const dir = mount(sizeMb);
  const filler = path.join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = fs.openSync(filler, 'a');
      try {
        // Big chunks first, then smaller ones for the last partial pages.
        for (const size of [1 << 16, 1 << 12, 1 << 9, 1]) {
          const chunk = Buffer.alloc(size);
          for (;;) {
            try {
              fs.writeSync(fd, chunk);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw error;
            }
          }
        }
      } finally {
        fs.closeSync(fd);
      }
    },
    free() {
      fs.rmSync(filler, { force: true });
    },
    remove() {
      execFileSync('umount', ['-l', dir]);
      fs.rmdirSync(dir);
    },
  };
}
