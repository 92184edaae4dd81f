// The request's status written where it differs from what the request shows, one write after the
// other, and the Machine's ExternallyRemediated condition told from it.
import { writeMachineCondition } from '../../../functions/adapters/kube/cluster-api/machine-remediated.ts';
import type { RequestStatus } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { conditionsOf, externallyRemediatedOf, type Condition } from '../../../functions/core/kubernetes/index.ts';
import { merged, sameStatus } from './status-level.ts';
import { keyOf, machineOf, type Said, type Tracked, type WatcherContext } from './tracked.ts';

export type WriteStatus = (entry: Tracked, status: Said, clear?: readonly (keyof RequestStatus)[]) => Promise<boolean>;

/** `afterWrite` runs after each write that changed the status (a request left Blocked is released for MHC's other Machines). */
export function createStatusWrites(ctx: WatcherContext, afterWrite: (entry: Tracked) => void): WriteStatus {
  const { runtime, log, requests, customObjects, machineApi } = ctx;

  /**
   * Writes what differs between `status` (with `clear` deleted) and what the request shows; true
   * when it wrote. A failed write leaves what the request shows unknown, so the next writes it whole.
   */
  const write = (entry: Tracked, status: Said, clear: readonly (keyof RequestStatus)[] = []): Promise<boolean> => {
    if (status.phase === 'Recovered') entry.recoveredAt ??= runtime.clock.now();
    const written = entry.writes
      .then(async () => {
        if (ctx.isStopped()) return false;
        const generation = entry.request.generation === undefined ? {} : { observedGeneration: entry.request.generation };
        const next = { ...merged(entry.shown, status, clear), ...generation };
        if (entry.shown && sameStatus(next, entry.shown)) return false;
        const now = new Date(runtime.clock.now()).toISOString();
        const conditions = conditionsOf(next, entry.conditions, { now: now.replace(/\.\d{3}Z$/, 'Z'), generation: entry.request.generation });
        const full: RequestStatus = { ...next, updatedAt: now, conditions };
        if (!(await requests.writeStatus(entry.request, full, clear)))
          log.info('request gone before its status was written', { request: keyOf(entry.request) });
        entry.shown = next;
        entry.conditions = conditions;
        tellMachine(entry, conditions);
        afterWrite(entry);
        return true;
      })
      .catch((error: unknown) => {
        entry.shown = undefined;
        log.warn('request status not written; written again from the incident on the next follow round', {
          request: keyOf(entry.request),
          error: String(error),
        });
        return false;
      });
    entry.writes = written.then(() => undefined);
    return written;
  };

  /**
   * The Machine's ExternallyRemediated condition from the request's, in the background, one write
   * at a time per request and always the latest (the adapter makes a write that lost a race again
   * from a fresh read); a Machine gone is nothing to tell.
   */
  function tellMachine(entry: Tracked, conditions: readonly Condition[]): void {
    const condition = externallyRemediatedOf(conditions);
    if (!condition) return;
    entry.machineWanted = condition;
    entry.machineWrites = (entry.machineWrites ?? Promise.resolve()).then(async () => {
      const wanted = entry.machineWanted;
      const key = wanted && JSON.stringify([wanted.status, wanted.reason, wanted.message]);
      if (!wanted || key === entry.machineSaid || ctx.isStopped()) return;
      try {
        await writeMachineCondition(customObjects, machineApi, machineOf(entry.request), wanted);
        entry.machineSaid = key;
      } catch (error) {
        log.warn("the Machine's ExternallyRemediated condition not written; written on the request's next change", {
          request: keyOf(entry.request),
          error: String(error),
        });
      }
    });
  }

  return write;
}
