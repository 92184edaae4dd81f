import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Clock } from '../../../../functions/ports/clock.ts';
import { manualClock } from '../../../support/manual-clock.ts';
import { systemClock } from '../../../../functions/lib/system-clock.ts';
import type { ScheduledEvent } from '../../../../functions/ports/scheduler.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../../functions/adapters/local/sqlite-store.ts';
import { createTimerScheduler, type TimerScheduler } from '../../../../functions/adapters/local/timer-scheduler.ts';
import { tempDir, waitFor, type TempDir } from '../../runtime/helpers.ts';

const retryDue = (incidentId: string, attempt: number): ScheduledEvent => ({
  detailType: 'RetryDue',
  detail: { incidentId, clusterId: 'c1', attempt },
});

describe('timer scheduler', () => {
  let dir: TempDir;
  let open: { store: SqliteIncidentStore; scheduler: TimerScheduler }[];
  let fired: ScheduledEvent[];

  const boot = (clock: Clock, fire?: (event: ScheduledEvent) => Promise<void>, onError?: () => void) => {
    const store = openSqliteStore({ path: dir.file('store.db') });
    const scheduler = createTimerScheduler({
      store,
      clock,
      fire: fire ?? (async (event) => void fired.push(event)),
      retryDelayMs: 1_000,
      onError: onError ?? (() => undefined),
    });
    open.push({ store, scheduler });
    return { store, scheduler };
  };
  const shutdown = async () => {
    for (const { store, scheduler } of open.splice(0)) {
      await scheduler.stop();
      await store.close();
    }
  };

  beforeEach(() => {
    dir = tempDir();
    open = [];
    fired = [];
  });
  afterEach(async () => {
    await shutdown();
    dir.remove();
  });

  it('persists timers: a new store on the same file sees them', async () => {
    const clock = manualClock(0);
    await boot(clock).scheduler.schedule({ name: 'retry-inc1-1', at: 5_000, event: retryDue('inc1', 1) });
    await shutdown();
    const { store } = boot(clock);
    expect(await store.nextTimer()).toMatchObject({ name: 'retry-inc1-1', fireAt: 5_000, payload: retryDue('inc1', 1) });
  });

  it('after a restart, start() fires what became due while it was down', async () => {
    const clock = manualClock(0);
    const first = boot(clock);
    await first.scheduler.start();
    await first.scheduler.schedule({ name: 'overdue', at: 1_000, event: retryDue('inc1', 1) });
    await first.scheduler.schedule({ name: 'later', at: 60_000, event: retryDue('inc2', 1) });
    await shutdown();
    expect(fired).toEqual([]);

    clock.set(2_000);
    const second = boot(clock);
    await second.scheduler.start();
    expect(fired).toEqual([retryDue('inc1', 1)]);
    expect(await second.store.dueTimers(Number.MAX_SAFE_INTEGER)).toMatchObject([{ name: 'later' }]);
  });

  it('the same name replaces the pending timer instead of adding one', async () => {
    const clock = manualClock(0);
    const { store, scheduler } = boot(clock);
    await scheduler.start();
    await scheduler.schedule({ name: 'retry-inc1', at: 1_000, event: retryDue('inc1', 1) });
    await scheduler.schedule({ name: 'retry-inc1', at: 3_000, event: retryDue('inc1', 2) });
    const all = await store.dueTimers(Number.MAX_SAFE_INTEGER);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ fireAt: 3_000, revision: 2 });

    clock.set(2_000);
    expect(await scheduler.runDue()).toBe(0);
    clock.set(3_000);
    expect(await scheduler.runDue()).toBe(1);
    expect(fired).toEqual([retryDue('inc1', 2)]);
    expect(await store.nextTimer()).toBeUndefined();
  });

  it('a cancelled timer never fires', async () => {
    const clock = manualClock(0);
    const { store, scheduler } = boot(clock);
    await scheduler.start();
    await scheduler.schedule({ name: 'a', at: 1_000, event: retryDue('a', 1) });
    await scheduler.schedule({ name: 'b', at: 1_000, event: retryDue('b', 1) });
    await scheduler.cancel('a');
    await scheduler.cancel('never-scheduled');
    clock.set(5_000);
    expect(await scheduler.runDue()).toBe(1);
    expect(fired).toEqual([retryDue('b', 1)]);
    expect(await store.nextTimer()).toBeUndefined();
  });

  it('fires in time order and only what is due', async () => {
    const clock = manualClock(0);
    const { scheduler } = boot(clock);
    await scheduler.start();
    await scheduler.schedule({ name: 'third', at: 3_000, event: retryDue('c', 1) });
    await scheduler.schedule({ name: 'first', at: 1_000, event: retryDue('a', 1) });
    await scheduler.schedule({ name: 'second', at: 2_000, event: retryDue('b', 1) });
    clock.set(2_500);
    await scheduler.runDue();
    expect(fired.map((e) => (e.detail as { incidentId: string }).incidentId)).toEqual(['a', 'b']);
  });

  it('keeps a timer whose fire failed and fires it again after the retry delay', async () => {
    const clock = manualClock(0);
    let failures = 1;
    const errors: unknown[] = [];
    const { store, scheduler } = boot(
      clock,
      async (event) => {
        if (failures-- > 0) throw new Error('bus down');
        fired.push(event);
      },
      () => void errors.push('failed'),
    );
    await scheduler.start();
    await scheduler.schedule({ name: 'flaky', at: 0, event: retryDue('inc1', 1) });
    await scheduler.runDue();
    expect(fired).toEqual([]);
    expect(errors).toEqual(['failed']);
    expect(await store.nextTimer()).toMatchObject({ name: 'flaky' });

    clock.advance(500);
    expect(await scheduler.runDue()).toBe(0);
    clock.advance(500);
    expect(await scheduler.runDue()).toBe(1);
    expect(fired).toEqual([retryDue('inc1', 1)]);
    expect(await store.nextTimer()).toBeUndefined();
  });

  it('forgets a failure once the timer was put again elsewhere for later', async () => {
    const clock = manualClock(0);
    let failures = 1;
    const { scheduler } = boot(clock, async (event) => {
      if (failures-- > 0) throw new Error('bus down');
      fired.push(event);
    });
    await scheduler.start();
    await scheduler.schedule({ name: 'retry-inc1', at: 0, event: retryDue('inc1', 1) });
    await scheduler.runDue();
    // Another process re-schedules the same name 200 ms out, well inside the 1 s retry delay.
    const elsewhere = boot(clock).store;
    await elsewhere.putTimer({ name: 'retry-inc1', fireAt: 200, payload: retryDue('inc1', 2) });
    await scheduler.runDue();
    clock.set(200);
    expect(await scheduler.runDue()).toBe(1);
    expect(fired).toEqual([retryDue('inc1', 2)]);
  });

  it('a timer re-scheduled while it fires survives the delete of the fired one', async () => {
    const clock = manualClock(0);
    const booted = boot(clock, async (event) => {
      fired.push(event);
      if (fired.length === 1) await booted.scheduler.schedule({ name: 'retry-inc1', at: 10_000, event: retryDue('inc1', 2) });
    });
    const { scheduler } = booted;
    await scheduler.start();
    await scheduler.schedule({ name: 'retry-inc1', at: 0, event: retryDue('inc1', 1) });
    await scheduler.runDue();
    expect(fired).toEqual([retryDue('inc1', 1)]);
    expect(await booted.store.nextTimer()).toMatchObject({ name: 'retry-inc1', fireAt: 10_000, payload: retryDue('inc1', 2) });
  });

  it('drops a stored timer that holds no event, and says so', async () => {
    const clock = manualClock(0);
    const errors: unknown[] = [];
    const { store, scheduler } = boot(clock, undefined, () => void errors.push('bad'));
    await store.putTimer({ name: 'junk', fireAt: 0, payload: { nope: true } });
    await scheduler.start();
    expect(errors).toEqual(['bad']);
    expect(await store.nextTimer()).toBeUndefined();
  });

  it('with the real clock, arms for the earliest timer, re-arming when an earlier one arrives', async () => {
    const firedAt = new Map<string, number>();
    const { store, scheduler } = boot(systemClock, async (event) => {
      firedAt.set((event.detail as { incidentId: string }).incidentId, Date.now());
    });
    await scheduler.start();
    const now = Date.now();
    await scheduler.schedule({ name: 'late', at: now + 1_000, event: retryDue('late', 1) });
    await scheduler.schedule({ name: 'early', at: now + 40, event: retryDue('early', 1) });
    await scheduler.schedule({ name: 'cancelled', at: now + 20, event: retryDue('cancelled', 1) });
    await scheduler.cancel('cancelled');
    await waitFor(() => firedAt.size === 2, 'both timers to fire');
    expect([...firedAt.keys()]).toEqual(['early', 'late']);
    expect(firedAt.get('early')).toBeGreaterThanOrEqual(now + 40);
    // Armed for 'late' only, 'early' would have waited for it.
    expect(firedAt.get('early')).toBeLessThan(now + 1_000);
    expect(firedAt.get('late')).toBeGreaterThanOrEqual(now + 1_000);
    await waitFor(async () => (await store.nextTimer()) === undefined, 'fired timers to be deleted');
  });

  it('stop() disarms: nothing fires afterwards, and the timer stays for the next start', async () => {
    const stopped: ScheduledEvent[] = [];
    const first = boot(systemClock, async (event) => void stopped.push(event));
    await first.scheduler.start();
    const at = Date.now() + 30;
    await first.scheduler.schedule({ name: 'x', at, event: retryDue('x', 1) });
    await first.scheduler.stop();
    // Let the armed instant pass by a margin; a scheduler still armed would have fired by then.
    await waitFor(() => Date.now() > at + 100, 'the armed instant to pass');
    expect(stopped).toEqual([]);
    expect(await first.store.nextTimer()).toMatchObject({ name: 'x' });

    const second = boot(systemClock);
    await second.scheduler.start();
    expect(fired).toEqual([retryDue('x', 1)]);
    expect(await second.store.nextTimer()).toBeUndefined();
  });
});
