// The timer scheduler over a state file on a real full disk: a timer whose delete fails is tried
// again after the store back-off, never at once, and is gone once space is back. A store that
// cannot even be read backs off the same way, and the scheduler wakes again on its own.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../../functions/lib/system-clock.ts';
import type { TimerStore } from '../../../../functions/ports/incident-store.ts';
import type { ScheduledEvent } from '../../../../functions/ports/scheduler.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../../functions/adapters/local/sqlite-store.ts';
import { createTimerScheduler, type TimerScheduler } from '../../../../functions/adapters/local/timer-scheduler.ts';
import { fullDiskUnavailable, smallDisk, type SmallDisk } from '../../../support/full-disk.ts';
import { waitFor } from '../../runtime/helpers.ts';

const title = fullDiskUnavailable ? `timer scheduler on a full disk (skipped: ${fullDiskUnavailable})` : 'timer scheduler on a full disk';
const BACKOFF_MS = 200;
const retryDue: ScheduledEvent = { detailType: 'RetryDue', detail: { incidentId: 'inc1', clusterId: 'c1', attempt: 1 } };

describe.skipIf(fullDiskUnavailable !== undefined)(title, () => {
  let disk: SmallDisk;
  let store: SqliteIncidentStore;
  let scheduler: TimerScheduler | undefined;
  const calls = { deletes: 0, reads: 0, fires: 0, errors: 0 };

  /** The store as the scheduler sees it, counting what it is asked; `unreadable` makes its reads fail. */
  const counted = (unreadable: { now: boolean }): TimerStore => ({
    putTimer: (input) => store.putTimer(input),
    deleteTimer: (name, revision) => {
      calls.deletes++;
      return store.deleteTimer(name, revision);
    },
    dueTimers: (now) => {
      calls.reads++;
      return unreadable.now ? Promise.reject(new Error('disk I/O error')) : store.dueTimers(now);
    },
    nextTimer: () => (unreadable.now ? Promise.reject(new Error('disk I/O error')) : store.nextTimer()),
  });
  const boot = (unreadable = { now: false }) =>
    createTimerScheduler({
      store: counted(unreadable),
      clock: systemClock,
      fire: async () => void calls.fires++,
      storeRetryDelayMs: BACKOFF_MS,
      onError: () => void calls.errors++,
    });

  beforeEach(() => {
    disk = smallDisk();
    store = openSqliteStore({ path: path.join(disk.dir, 'state.sqlite') });
    Object.assign(calls, { deletes: 0, reads: 0, fires: 0, errors: 0 });
  });
  afterEach(async () => {
    await scheduler?.stop();
    scheduler = undefined;
    await store.close();
    disk.remove();
  });

  it('a fired timer whose delete fails is tried again after the back-off, and deleted once space is back', async () => {
    await store.putTimer({ name: 'retry-inc1-1', fireAt: Date.now(), payload: retryDue });
    disk.fill();
    scheduler = boot();
    const began = Date.now();
    const started = await scheduler.start().then(
      () => 'started',
      (error: unknown) => `start failed: ${String(error)}`,
    );
    await waitFor(() => calls.deletes >= 4, 'four delete attempts on the full disk');
    const outageMs = Date.now() - began;
    const allowed = Math.floor(outageMs / BACKOFF_MS) + 2;
    expect(calls.deletes, `${calls.deletes} deletes in ${outageMs} ms`).toBeLessThanOrEqual(allowed);
    // Each try fires the timer again (at-least-once), so fires keep to the back-off too.
    expect(calls.fires).toBeLessThanOrEqual(calls.deletes);
    expect(calls.errors).toBeLessThanOrEqual(allowed);
    expect(started).toBe('started');

    disk.free();
    await waitFor(async () => (await store.nextTimer()) === undefined, 'the timer to be deleted once space is back', 5 * BACKOFF_MS + 2_000);
    const settled = { ...calls };
    // Nothing left to do: it does not go on firing or deleting.
    await waitFor(() => Date.now() - began > outageMs + 3 * BACKOFF_MS, 'three more back-offs to pass');
    expect(calls.deletes).toBe(settled.deletes);
    expect(calls.fires).toBe(settled.fires);
  });

  it('a store it cannot read is asked again after the back-off, and what is due fires once it answers', async () => {
    const unreadable = { now: false };
    scheduler = boot(unreadable);
    await scheduler.start();
    unreadable.now = true;
    const began = Date.now();
    await scheduler.schedule({ name: 'retry-inc1-1', at: Date.now() + 20, event: retryDue });
    await waitFor(() => calls.reads >= 3, 'three reads of the unreadable store');
    expect(calls.reads).toBeLessThanOrEqual(Math.floor((Date.now() - began) / BACKOFF_MS) + 2);
    expect(calls.fires).toBe(0);

    unreadable.now = false;
    await waitFor(() => calls.fires === 1, 'the timer to fire once the store answers', 5 * BACKOFF_MS + 2_000);
    await waitFor(async () => (await store.nextTimer()) === undefined, 'the fired timer to be deleted');
  });
});
