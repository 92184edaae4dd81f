// Which open incidents a runtime may run. `run` resumes every incident in its state file;
// `remediate` only the one it was asked for, so a later command never finishes an old incident on
// the side. The others are left exactly as they are, their timers included, for whoever is asked
// to resume them. An incident opened after start is the runtime's own.
import type { IncidentStore, StoredTimer, TimerStore } from '../../functions/ports/incident-store.ts';

export type ResumeOption = 'all' | { incidentIds: readonly string[] };

export interface ResumeScope {
  /** Fixes what is left alone: the incidents open now that the option does not name. */
  fix(store: IncidentStore): Promise<void>;
  includes(incidentId: string): boolean;
  /** The timer store as the scheduler should see it: the left incidents' timers neither fire nor wake it. */
  timers(store: TimerStore): TimerStore;
  /** The store as the sweep should see it: the left incidents are not listed. */
  incidents(store: IncidentStore): IncidentStore;
}

const incidentOf = (timer: StoredTimer): unknown => (timer.payload as { detail?: { incidentId?: unknown } } | null)?.detail?.incidentId;

export function resumeScope(option: ResumeOption = 'all'): ResumeScope {
  const leftAlone = new Set<string>();
  const includes = (incidentId: string) => !leftAlone.has(incidentId);
  const timerIncluded = (timer: StoredTimer) => {
    const incidentId = incidentOf(timer);
    return typeof incidentId !== 'string' || includes(incidentId);
  };
  return {
    async fix(store) {
      if (option === 'all') return;
      const named = new Set(option.incidentIds);
      for (const incident of await store.listIncidents({ state: 'open' })) {
        if (!named.has(incident.incidentId)) leftAlone.add(incident.incidentId);
      }
    },
    includes,
    timers: (store) => ({
      putTimer: (input) => store.putTimer(input),
      deleteTimer: (name, revision) => store.deleteTimer(name, revision),
      dueTimers: async (now) => (await store.dueTimers(now)).filter(timerIncluded),
      nextTimer: async () => (leftAlone.size === 0 ? store.nextTimer() : (await store.dueTimers(Number.MAX_SAFE_INTEGER)).find(timerIncluded)),
    }),
    incidents: (store) =>
      // A proxy, not a copy: the store is a class with private state, and every other method must stay its own.
      new Proxy(store, {
        get(target, key) {
          if (key === 'listIncidents') {
            return async (...args: Parameters<IncidentStore['listIncidents']>) => (await target.listIncidents(...args)).filter((i) => includes(i.incidentId));
          }
          const value: unknown = Reflect.get(target, key, target);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      }),
  };
}
