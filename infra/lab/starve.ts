// CPU starvation of one lab member, for real: SIGSTOP and SIGCONT in short cycles, so the process
// runs `runMs` out of every `stopMs + runMs`. etcd's own clocks see it as a starved host does: the
// leader's heartbeats leave late (heartbeat_send_failures_total), writes wait, and an fsync or a
// commit caught by a stop takes as long. Each stop stays under the election timeout, so the
// member keeps its role; end() always leaves it running.
import { setTimeout as sleep } from 'node:timers/promises';

export interface StarveCycle {
  /** How long each stop lasts: keep it under the election timeout, or an election follows. */
  stopMs: number;
  runMs: number;
}

export interface Starving {
  /** Ends the cycles and leaves the process running (SIGCONT). */
  end(): Promise<void>;
}

export function starveProcess(pid: number, cycle: StarveCycle, signal: (pid: number, sig: NodeJS.Signals) => void): Starving {
  if (!(cycle.stopMs > 0 && cycle.runMs > 0)) throw new RangeError(`stopMs and runMs must be > 0, not ${cycle.stopMs} and ${cycle.runMs}`);
  let starving = true;
  const loop = (async () => {
    while (starving) {
      signal(pid, 'SIGSTOP');
      try {
        await sleep(cycle.stopMs);
      } finally {
        signal(pid, 'SIGCONT');
      }
      if (starving) await sleep(cycle.runMs);
    }
  })();
  return {
    async end() {
      starving = false;
      await loop;
    },
  };
}
