// The bin shim re-runs the CLI with the project's Node as its child when the running Node is too
// old. The child must not outlive the shim: a shim killed with SIGKILL can pass nothing on, and
// an orphan would go on remediating. The shim gives the child an IPC channel; the channel closing
// means the shim is gone, and the child stops as it would on SIGTERM (an open incident stays open).
import { PROGRAM } from './args.ts';

export function watchParent(): void {
  if (!process.channel) return;
  // The channel alone must not keep a finished command alive.
  process.channel.unref();
  const parent = process.ppid;
  process.once('disconnect', () => {
    process.stderr.write(`${PROGRAM}: the process that started this one (pid ${parent}) is gone; stopping\n`);
    process.kill(process.pid, 'SIGTERM');
  });
}
