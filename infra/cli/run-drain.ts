// `run` fed by stdin, once its input ends: as the last stage of a pipeline, it finishes the
// incidents it took (those it accepted, and those it resumed at start) before it exits. It waits
// on the bus, not on a clock: each terminal event, and the bus falling idle while a report has not
// opened its incident. Bounded by the incidents' own deadlines plus a minute (as remediate waits):
// the pipeline ends an incident at its deadline, so the bound is reached only when it could not
// (a state file that stays unwritable); then it stops waiting and says what stays open.
import { isTerminalEvent } from '../../events/catalogue.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';
import type { LocalRuntime } from '../runtime/runtime.ts';
import { MAX_TIMER_MS } from '../../functions/lib/timer-limit.ts';

/** Past the incident deadline, how long to wait for the step that ends the incident. */
const DEADLINE_SLACK_MS = 60_000;

export type DrainEnd =
  /** Every incident ended; `neverOpened` were accepted, but the bus is done with them and none opened. */
  | { kind: 'drained'; finished: number; neverOpened: string[] }
  | { kind: 'bound'; open: Incident[] }
  | { kind: 'signal'; signal: NodeJS.Signals; open: Incident[] };

export interface DrainOptions {
  /** The incident deadline of a cluster's policy. */
  deadlineMs: (clusterId: string) => number;
  /** Stops the wait at once, e.g. SIGTERM. */
  signal: Promise<NodeJS.Signals>;
  /** How long past the latest deadline it still waits (default a minute). */
  slackMs?: number;
  now?: () => number;
}

interface Progress {
  open: Incident[];
  /** Accepted ids with no incident yet, while the bus still carries work. */
  opening: string[];
  neverOpened: string[];
  finished: number;
}

async function progressOf(runtime: Pick<LocalRuntime, 'store' | 'bus'>, incidentIds: readonly string[]): Promise<Progress> {
  const progress: Progress = { open: [], opening: [], neverOpened: [], finished: 0 };
  // Read before the incidents: an idle bus with no incident means the report will never open one.
  const busy = runtime.bus.inFlight > 0;
  for (const id of incidentIds) {
    const incident = await runtime.store.getIncident(id);
    if (incident?.state === 'open') progress.open.push(incident);
    else if (incident) progress.finished++;
    else if (busy) progress.opening.push(id);
    else progress.neverOpened.push(id);
  }
  return progress;
}

/** Waits until every incident named has ended, the bound passes, or the signal comes. */
export async function drainIncidents(runtime: Pick<LocalRuntime, 'store' | 'bus'>, incidentIds: readonly string[], options: DrainOptions): Promise<DrainEnd> {
  const now = options.now ?? Date.now;
  const slackMs = options.slackMs ?? DEADLINE_SLACK_MS;
  const ids = new Set(incidentIds);
  /** Counts the endings seen, so one that comes while the incidents are being read is not missed. */
  let endings = 0;
  let wake: () => void = () => undefined;
  const unsubscribe = runtime.bus.subscribe((event) => {
    if (!isTerminalEvent(event) || !ids.has(event.detail.incidentId)) return;
    endings++;
    wake();
  });
  let bound: NodeJS.Timeout | undefined;
  try {
    let seen = endings;
    let progress = await progressOf(runtime, incidentIds);
    const longest = Math.max(0, ...progress.open.map((i) => options.deadlineMs(i.clusterId)));
    const boundAt =
      Math.max(now(), ...progress.open.map((i) => i.openedAt + options.deadlineMs(i.clusterId))) + (progress.opening.length > 0 ? longest : 0) + slackMs;
    // A timer that holds the process: the runtime's own timers do not (they are persisted).
    const reachedBound = new Promise<'bound'>((resolve) => {
      bound = setTimeout(() => resolve('bound'), Math.min(boundAt - now(), MAX_TIMER_MS));
    });
    const signalled = options.signal.then((signal) => ({ signal }));
    for (;;) {
      if (progress.open.length === 0 && progress.opening.length === 0)
        return { kind: 'drained', finished: progress.finished, neverOpened: progress.neverOpened };
      if (endings === seen) {
        const woken = new Promise<'woken'>((resolve) => {
          wake = () => resolve('woken');
        });
        const idle = progress.opening.length > 0 ? runtime.bus.drain().then(() => 'woken' as const) : woken;
        const got = await Promise.race([woken, idle, reachedBound, signalled]);
        if (got === 'bound') return { kind: 'bound', open: (await progressOf(runtime, incidentIds)).open };
        if (typeof got === 'object') return { kind: 'signal', signal: got.signal, open: (await progressOf(runtime, incidentIds)).open };
      }
      seen = endings;
      progress = await progressOf(runtime, incidentIds);
    }
  } finally {
    clearTimeout(bound);
    unsubscribe();
  }
}
