// Test support: the cases of a file run a few at a time (describe.concurrent), each on a world of
// its own, booted ahead of it. A case that removes a member needs a fresh world, and most of its
// time is spent waiting on etcd's and the runtime's clocks (etcd's ~5 s refusal of reconfiguration
// after its members connect, elections, the runtime's backoffs), not on the CPU. What a loaded
// machine threatens is a case's first steps, its looks over the relays and port-forwards, whose
// deadlines decide what it plans: so those of one case never run beside another's, nor beside a
// boot (etcd and openssl starting); the rest of a case (a removal refused until etcd allows it,
// the new leader's election) runs beside the next one's. A case says when it is past them
// (settled). Worlds boot one at a time, in the order the cases take them, no more up than the
// lanes plus those kept ahead; each is stopped when the case that took it finishes, before its
// lane is given to the next case. One started and never taken is stopped after the file.
import { afterAll, type TestContext } from 'vitest';

export interface LanesOptions<T> {
  /** How many of the file's cases take a world (so none is booted for no case). */
  cases: number;
  /** How many cases run at once. */
  lanes: number;
  /** Worlds booted beyond those the running cases hold, to age while the cases before them run. */
  ahead: number;
  start: () => Promise<T>;
  stop: (started: T) => Promise<void>;
  /** Boots the first worlds as the file is collected, not when its first case runs. */
  beginNow?: boolean;
  /**
   * A case starts only once every world begun before it has booted, as started-ahead.ts has it:
   * those behind it then age through its first steps instead of booting after them.
   */
  afterBoots?: boolean;
}

export interface Taken<T> {
  world: T;
  /**
   * Says the case is past its first steps (the looks whose deadlines a loaded machine threatens):
   * the next case may start beside it. Idempotent; said anyway when the case finishes.
   */
  settled: () => void;
}

export interface Lanes<T> {
  /**
   * Waits for a free lane and for the case before it to settle, then for the next world in order.
   * The world is stopped, and the lane freed, when `test` finishes: after what the test itself
   * deferred with onTestFinished (those run last deferred first). A world that failed to boot fails
   * the test that takes it.
   */
  take(test: Pick<TestContext, 'onTestFinished'>): Promise<Taken<T>>;
}

export function lanesOf<T>(options: LanesOptions<T>): Lanes<T> {
  const { cases, lanes, ahead, start, stop } = options;
  // Held by a boot, or by a case until it settles: a boot never runs beside a case's first steps,
  // nor two of either at once. A case waiting to start goes before a boot for a later case.
  const quiet = gate();
  const booted: Promise<T>[] = [];
  let begun = 0;
  /** Worlds started and not stopped yet: taken, or waiting for their case. */
  let live = 0;
  const boot = (): void => {
    while (begun < cases && live < lanes + ahead) {
      begun += 1;
      live += 1;
      const next = quiet.acquire('later').then(async () => {
        try {
          return await start();
        } finally {
          quiet.release();
        }
      });
      // Its failure is reported to the case that takes it, not as an unhandled rejection now.
      next.catch(() => undefined);
      booted.push(next);
    }
  };
  const lane = semaphore(lanes);

  if (options.beginNow) boot();
  afterAll(async () => {
    const unused = booted.splice(0);
    await Promise.all(unused.map((started) => started.then(stop, () => undefined)));
  });
  return {
    async take(test) {
      await lane.acquire();
      const taken: { world?: T } = {};
      let holding = false;
      let finished = false;
      const settled = (): void => {
        if (holding) quiet.release();
        holding = false;
      };
      test.onTestFinished(async () => {
        finished = true;
        settled();
        try {
          if (taken.world !== undefined) await stop(taken.world);
        } finally {
          live -= 1;
          boot();
          lane.release();
        }
      });
      boot();
      const next = booted.shift();
      if (!next) throw new Error(`more cases took a world than the ${cases} the lanes were told of`);
      const world = (taken.world = await next);
      if (options.afterBoots) await Promise.all(booted.map((behind) => behind.catch(() => undefined)));
      await quiet.acquire('first');
      holding = true;
      // Timed out while it waited: it gives its turn straight back.
      if (finished) {
        settled();
        throw new Error('the case finished before its turn to start');
      }
      return { world, settled };
    },
  };
}

function semaphore(count: number): { acquire(): Promise<void>; release(): void } {
  let free = count;
  const waiting: (() => void)[] = [];
  return {
    acquire() {
      if (free > 0) {
        free -= 1;
        return Promise.resolve();
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    release() {
      const next = waiting.shift();
      if (next) next();
      else free += 1;
    },
  };
}

/**
 * One holder at a time, those asking 'first' served before those asking 'later'. A release hands
 * over on the next turn of the event loop, so a case whose world has just booted asks before the
 * gate goes to the next boot.
 */
function gate(): { acquire(rank: 'first' | 'later'): Promise<void>; release(): void } {
  let held = false;
  const waiting = { first: [] as (() => void)[], later: [] as (() => void)[] };
  return {
    acquire(rank) {
      if (!held) {
        held = true;
        return Promise.resolve();
      }
      return new Promise((resolve) => waiting[rank].push(resolve));
    },
    release() {
      setImmediate(() => {
        const next = waiting.first.shift() ?? waiting.later.shift();
        if (next) next();
        else held = false;
      });
    },
  };
}
