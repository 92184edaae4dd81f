// Processes by pid: whether one is alive, and whether a pid still names a process we started.
import fs from 'node:fs';

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it just is not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when `pid` is alive and its command line contains `marker` (the lab's token or state file).
 * A pid read from a file may have been reused by an unrelated process since; that one is not ours.
 * Where /proc cannot be read, the pid is trusted as it stands.
 */
export function isOurs(pid: number, marker: string): boolean {
  if (!isAlive(pid)) return false;
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOENT with the pid alive means no /proc here; anything else means it vanished meanwhile.
    return code === 'ENOENT' && !fs.existsSync('/proc/self');
  }
  return cmdline.split('\0').some((arg) => arg.includes(marker));
}

/** SIGKILL each pid that is still ours; returns the pids it signalled. */
export function killOurs(pids: number[], marker: string): number[] {
  return pids.filter((pid) => {
    if (!isOurs(pid, marker)) return false;
    try {
      process.kill(pid, 'SIGKILL');
      return true;
    } catch {
      return false;
    }
  });
}
