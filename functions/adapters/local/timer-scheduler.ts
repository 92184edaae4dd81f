// The local scheduler: every timer lives in the store first, so a restart still fires what is due.
// One setTimeout is armed for the earliest timer; a timer is deleted only after `fire` succeeded,
// which makes delivery at-least-once. Due timers fire one after another, earliest first. A store
// that fails (a full disk) is asked again after a back-off, never at once: a timer whose delete
// failed is still due, and re-armed at once it would fire again and again without end.
import type { Clock } from '../../ports/clock.ts';
import type { StoredTimer, TimerStore } from '../../ports/incident-store.ts';
import type { ScheduledEvent, ScheduleRequest, Scheduler } from '../../ports/scheduler.ts';
import { MAX_TIMER_MS } from '../../lib/timer-limit.ts';

export interface TimerSchedulerOptions {
  store: TimerStore;
  clock: Clock;
  fire: (event: ScheduledEvent) => Promise<void>;
  /** How long a timer whose `fire` failed waits before the next try. */
  retryDelayMs?: number;
  /** How long to wait after the store failed (a timer not deleted, timers not read) before asking it again. */
  storeRetryDelayMs?: number;
  /** Told about a failed `fire` (the timer stays and is retried) and about store failures (no timer). */
  onError?: (error: unknown, timer?: StoredTimer) => void;
}

export interface TimerScheduler extends Scheduler {
  /** Fires overdue timers now and arms the next one. */
  start(): Promise<void>;
  /** Fires every timer due by the clock; returns how many fired. Tests drive a manual clock with it. */
  runDue(): Promise<number>;
  /** Disarms; waits for a firing pass already under way. */
  stop(): Promise<void>;
}

/** The default report of a failed timer or store: to stderr, with the error. */
export const reportTimerError = (error: unknown, timer?: StoredTimer): void =>
  console.error(timer ? `timer ${timer.name} failed to fire` : 'timer scheduler: store failed', error);

export function createTimerScheduler(options: TimerSchedulerOptions): TimerScheduler {
  const { store, clock, fire } = options;
  const retryDelayMs = options.retryDelayMs ?? 1_000;
  const storeRetryDelayMs = options.storeRetryDelayMs ?? 5_000;
  const onError = options.onError ?? reportTimerError;
  /** Timer name → when a failed timer may be tried again (in memory: a restart retries at once). */
  const failedUntil = new Map<string, number>();
  /** Set while the store fails: no pass runs before this time. */
  let storeDownUntil: number | undefined;
  let handle: NodeJS.Timeout | undefined;
  let started = false;
  let pass: Promise<number> | undefined;
  let passAgain = false;

  async function fireOne(timer: StoredTimer): Promise<boolean> {
    const event = toEvent(timer);
    if (!event) {
      // Not an event we wrote: it can never fire, so drop it rather than retry forever.
      onError(new TypeError(`timer ${timer.name} does not hold a scheduled event`), timer);
      await store.deleteTimer(timer.name, timer.revision);
      return false;
    }
    try {
      await fire(event);
    } catch (error) {
      failedUntil.set(timer.name, clock.now() + retryDelayMs);
      onError(error, timer);
      return false;
    }
    failedUntil.delete(timer.name);
    try {
      // A timer put again while firing has a new revision and stays.
      await store.deleteTimer(timer.name, timer.revision);
    } catch (error) {
      // Still stored, so still due: it fires again (at-least-once) after the back-off, not at once.
      failedUntil.set(timer.name, clock.now() + storeRetryDelayMs);
      throw error;
    }
    return true;
  }

  async function firePass(): Promise<number> {
    let fired = 0;
    do {
      passAgain = false;
      const now = clock.now();
      const due = await store.dueTimers(now);
      // A failed timer is always overdue; one that is not (cancelled, or put again elsewhere) is forgotten.
      for (const name of failedUntil.keys()) if (!due.some((t) => t.name === name)) failedUntil.delete(name);
      for (const timer of due) {
        if ((failedUntil.get(timer.name) ?? 0) > now) continue;
        if (await fireOne(timer)) fired++;
      }
    } while (passAgain);
    return fired;
  }

  /**
   * One pass at a time, so no timer fires twice concurrently; a call during a pass asks for another.
   * A store failure ends the pass: it is told, and the next pass waits out the store back-off.
   */
  async function runDue(): Promise<number> {
    if (pass) {
      passAgain = true;
      return pass;
    }
    pass = firePass().catch((error: unknown) => {
      storeFailed(error);
      return 0;
    });
    try {
      return await pass;
    } finally {
      pass = undefined;
      await arm();
    }
  }

  function storeFailed(error: unknown): void {
    storeDownUntil = clock.now() + storeRetryDelayMs;
    onError(error);
  }

  /** When to wake next: the earliest timer, except that failed timers wait out their retry delay. */
  async function wakeAt(): Promise<number | undefined> {
    if (storeDownUntil !== undefined && storeDownUntil > clock.now()) return storeDownUntil;
    storeDownUntil = undefined;
    try {
      return await nextWake();
    } catch (error) {
      storeFailed(error);
      return storeDownUntil;
    }
  }

  async function nextWake(): Promise<number | undefined> {
    const next = await store.nextTimer();
    if (!next) return undefined;
    const retries = [...failedUntil.values()];
    if (retries.length === 0) return next.fireAt;
    // Failed timers wait out their delay; any other timer due before that still fires on time.
    const earliestRetry = Math.min(...retries);
    const onTime = (await store.dueTimers(earliestRetry)).find((t) => !failedUntil.has(t.name));
    return Math.min(earliestRetry, onTime?.fireAt ?? Infinity);
  }

  async function arm(): Promise<void> {
    if (!started) return;
    const at = await wakeAt();
    if (handle) clearTimeout(handle);
    handle = undefined;
    if (at === undefined || !started) return;
    // A timer further out than one Node timer holds wakes early and re-arms.
    const delay = Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS);
    handle = setTimeout(() => {
      if (started) runDue().catch((error: unknown) => onError(error));
    }, delay);
    // Pending timers are persisted, so they need not keep the process alive.
    handle.unref();
  }

  return {
    async schedule({ name, at, event }: ScheduleRequest): Promise<void> {
      await store.putTimer({ name, fireAt: at, payload: event });
      failedUntil.delete(name);
      await arm();
    },
    async cancel(name: string): Promise<void> {
      await store.deleteTimer(name);
      failedUntil.delete(name);
      await arm();
    },
    async start(): Promise<void> {
      started = true;
      await runDue();
    },
    runDue,
    async stop(): Promise<void> {
      started = false;
      if (handle) clearTimeout(handle);
      handle = undefined;
      await pass?.catch(() => undefined);
    },
  };
}

function toEvent(timer: StoredTimer): ScheduledEvent | undefined {
  const payload = timer.payload;
  if (typeof payload === 'object' && payload !== null && 'detailType' in payload && typeof payload.detailType === 'string') {
    return { detailType: payload.detailType, detail: 'detail' in payload ? payload.detail : undefined };
  }
  return undefined;
}
