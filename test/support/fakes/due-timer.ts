// For fakes that hold things until a time on their clock: tests with a manual clock call runDue()
// themselves; with autoRun a timer wakes the fake when the earliest item is due on the clock.
import type { Clock } from '../../../functions/ports/clock.ts';
import { MAX_TIMER_MS } from '../../../functions/lib/timer-limit.ts';

export interface DueTimer {
  /** Wakes at `at` (epoch ms on the clock); undefined disarms. */
  arm(at: number | undefined): void;
  stop(): void;
}

export function dueTimer(clock: Clock, enabled: boolean, wake: () => void): DueTimer {
  let handle: NodeJS.Timeout | undefined;
  let stopped = false;
  return {
    arm(at) {
      if (handle) clearTimeout(handle);
      handle = undefined;
      if (!enabled || stopped || at === undefined) return;
      // setTimeout fires at once past 2^31-1 ms; waking early only re-arms.
      handle = setTimeout(wake, Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS));
      handle.unref();
    },
    stop() {
      stopped = true;
      if (handle) clearTimeout(handle);
      handle = undefined;
    },
  };
}
