// A directory nothing can be written in. For a user other than root, one without write permission;
// root passes permission checks, so for root a read-only tmpfs is mounted for the test (that needs
// CAP_SYS_ADMIN: where it is refused, `readOnlyDirUnavailable` says why, and only then are the
// tests that need it skipped).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ReadOnlyDir {
  readonly dir: string;
  /** What the snapshot store says of it: the cause as the errno names it. */
  readonly says: string;
  remove(): void;
}

const asRoot = process.getuid?.() === 0;

function mountReadOnly(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-only-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m,mode=0755', 'tmpfs', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    return dir;
  } catch (error) {
    fs.rmdirSync(dir);
    throw error;
  }
}

/** Why no read-only directory can be made here, or undefined when it can. Checked once, by trying. */
export const readOnlyDirUnavailable: string | undefined = (() => {
  if (!asRoot) return undefined;
  try {
    const dir = mountReadOnly();
    execFileSync('umount', [dir]);
    fs.rmdirSync(dir);
    return undefined;
  } catch (error) {
    const said = error instanceof Error && 'stderr' in error ? String(error.stderr).trim() : String(error);
    return `cannot mount a read-only tmpfs as root (needs CAP_SYS_ADMIN): ${said || 'mount failed'}`;
  }
})();

export function readOnlyDir(): ReadOnlyDir {
  if (asRoot) {
    const dir = mountReadOnly();
    return {
      dir,
      says: 'is on a read-only file system',
      remove() {
        execFileSync('umount', ['-l', dir]);
        fs.rmdirSync(dir);
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-only-'));
  fs.chmodSync(dir, 0o555);
  return {
    dir,
    says: 'is not writable: permission denied',
    remove() {
      fs.chmodSync(dir, 0o755);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
