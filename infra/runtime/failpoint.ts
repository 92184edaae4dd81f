// Failpoints, for the crash tests: ETCD_REMEDIATOR_FAILPOINT names a journaled step, and the
// local runtime's process dies by SIGKILL right after that step is written to the state file: a
// real crash, with no cleanup, no lock release and no outbox carried out. The application knows
// nothing of it; the runtime wraps the store it hands the functions. Unset, the store is handed
// over as it is. Only the local runtime reads it, so nothing deployed to AWS ever does.
import type { LEADER_MOVE_MADE, NamedStep } from '../../functions/core/incident/index.ts';
import type { IncidentJournal, JournalInput, MarkerStep } from '../../functions/ports/incident-store.ts';

export const FAILPOINT_ENV = 'ETCD_REMEDIATOR_FAILPOINT';

/** Each is a journal step (a `leader-move-made@N` marker is named without its attempt), in the order a remediation writes them. */
export const FAILPOINTS = [
  'probed',
  'leader-move-made',
  'leader-moved',
  'lock-taken',
  'snapshot-taken',
  'member-removed',
  'leader-elected',
  'actuator-called',
  'lock-released',
] as const satisfies readonly (NamedStep | typeof LEADER_MOVE_MADE)[];

export type Failpoint = (typeof FAILPOINTS)[number];

export class UnknownFailpointError extends Error {
  constructor(value: string) {
    super(`${FAILPOINT_ENV}=${value}: no such failpoint (one of ${FAILPOINTS.join(', ')}; unset it to run normally)`);
    this.name = 'UnknownFailpointError';
  }
}

/** The failpoint the environment names, or undefined when unset or empty; throws on an unknown name. */
export function failpointFrom(env: NodeJS.ProcessEnv = process.env): Failpoint | undefined {
  const value = env[FAILPOINT_ENV]?.trim();
  if (!value) return undefined;
  if (!(FAILPOINTS as readonly string[]).includes(value)) throw new UnknownFailpointError(value);
  return value as Failpoint;
}

const stepOf = (entry: JournalInput): string => entry.step.replace(/@\d+$/, '');

/** Dies at once, as a crash would: nothing after this runs, not even exit handlers. */
export function crash(failpoint: Failpoint): never {
  process.stderr.write(`${FAILPOINT_ENV}=${failpoint}: the step is journaled; pid ${process.pid} kills itself (SIGKILL)\n`);
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL to oneself is delivered before kill() returns; this is never reached.
  throw new Error('SIGKILL did not end the process');
}

/**
 * The store as the functions see it: with a failpoint, its journal writes crash the process once
 * the named step is written (a marker only when this call recorded it). Without, the store itself.
 */
export function withFailpoint<S extends IncidentJournal>(store: S, failpoint: Failpoint | undefined, die: (failpoint: Failpoint) => void = crash): S {
  if (!failpoint) return store;
  const appendJournal = async (incidentId: string, entry: JournalInput): Promise<void> => {
    await store.appendJournal(incidentId, entry);
    if (stepOf(entry) === failpoint) die(failpoint);
  };
  const markStep = async (incidentId: string, entry: JournalInput & { step: MarkerStep }): Promise<boolean> => {
    const recorded = await store.markStep(incidentId, entry);
    if (recorded && stepOf(entry) === failpoint) die(failpoint);
    return recorded;
  };
  // The store keeps private state: every other method runs on the store itself.
  return new Proxy(store, {
    get(target, property) {
      if (property === 'appendJournal') return appendJournal;
      if (property === 'markStep') return markStep;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
