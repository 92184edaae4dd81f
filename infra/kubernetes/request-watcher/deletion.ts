// A request being deleted: withdrawn by its MachineHealthCheck (its own incident stops, unless
// removal began), or collected with its Machine (held by our finalizer until its outcome is written
// and a while after, so `kubectl wait` reads it). The finalizer is kept by level.
import { handleWhenResult, retry } from 'cockatiel';
import { createMachineReader } from '../../../functions/adapters/kube/cluster-api/machines.ts';
import { withdrawIncident, type WithdrawOutcome } from '../../../functions/app/incident/index.ts';
import { doublingBackoff } from '../../../functions/lib/doubling-backoff.ts';
import { ended, keyOf, type Tracked, type WatcherContext } from './tracked.ts';

/** A step may hold the incident for a moment: asked again after 100 ms, then twice as long, up to 2 s apart. */
const withdrawAgain = retry(
  handleWhenResult((outcome) => (outcome as WithdrawOutcome | undefined)?.kind === 'busy'),
  { maxAttempts: Infinity, backoff: doublingBackoff(100, 2_000) },
).dangerouslyUnref();

export interface Deletion {
  settleHold: (entry: Tracked) => Promise<void>;
  deletionCause: (entry: Tracked) => Promise<'withdrawn' | 'collected' | undefined>;
  withdrawIncidentOf: (entry: Tracked) => Promise<void>;
}

export function createDeletion(ctx: WatcherContext): Deletion {
  const { runtime, options, log, customObjects, machineApi, requests } = ctx;

  /**
   * Why a request is being deleted: its MHC withdrew it (the Machine is there, the same one, not
   * deleting: healthy again), or the garbage collector took it after its Machine went (ours to
   * delete once the member is out). Undefined when the Machine cannot be read now.
   */
  async function deletionCause(entry: Tracked): Promise<'withdrawn' | 'collected' | undefined> {
    const reader = createMachineReader({ customObjects, clusterName: entry.request.clusterName ?? '', version: machineApi });
    const machine = await reader.machineByName(entry.request.namespace, entry.request.machineName).catch((error: unknown) => {
      log.warn("the request's Machine not read, so why the request is deleted is not known yet; read again on the next round", {
        request: keyOf(entry.request),
        error: String(error),
      });
      return null;
    });
    if (machine === null) return undefined;
    const owner = entry.request.machineOwner?.uid;
    return !machine || machine.deleting || (owner !== undefined && owner !== machine.uid) ? 'collected' : 'withdrawn';
  }

  /** Adds or removes the finalizer; a failure (a Conflict with a newer version) is tried again on the next change or round. */
  async function setHold(entry: Tracked, hold: boolean): Promise<boolean> {
    if (entry.patchingHold) return false;
    entry.patchingHold = true;
    try {
      await requests.holdForOutcome(entry.request, entry.request.finalizers ?? [], hold);
      return true;
    } catch (error) {
      log.warn(`request finalizer not ${hold ? 'added' : 'removed'}; tried again on the next round`, { request: keyOf(entry.request), error: String(error) });
      return false;
    } finally {
      entry.patchingHold = false;
    }
  }

  /**
   * The request's finalizer by level, each time it is seen and each round: added while it stands;
   * once it is being deleted, the cause decided once, then removed when that deletion may go on.
   */
  async function settleHold(entry: Tracked): Promise<void> {
    if (ctx.isStopped() || entry.clusterId === '') return;
    const { request } = entry;
    if (request.deletingSince === undefined) {
      if (!request.heldForOutcome) await setHold(entry, true);
      return;
    }
    if (!entry.deletion) {
      const cause = await deletionCause(entry);
      if (!cause || entry.deletion) return;
      entry.deletion = { cause, since: Date.parse(request.deletingSince) || runtime.clock.now() };
      if (cause === 'collected')
        log.info('request deleted by the garbage collector after its Machine, which this incident replaces; kept until its outcome is written', {
          request: keyOf(request),
          incidentId: entry.incidentId,
        });
      else void withdrawIncidentOf(entry).finally(() => (entry.deletion!.settled = true));
    }
    if (!request.heldForOutcome || !releaseDue(entry)) return;
    if (await setHold(entry, false)) log.info('request released: its deletion goes on', { request: keyOf(request), cause: entry.deletion.cause });
  }

  /** Whether a deleting request may go now (the deletion's cause decided). */
  function releaseDue(entry: Tracked): boolean {
    const deletion = entry.deletion!;
    if (deletion.cause === 'withdrawn') return deletion.settled === true;
    const now = runtime.clock.now();
    if (ended(entry)) {
      deletion.endedAt ??= now;
      return now - deletion.endedAt >= (options.keepEndedMs ?? 15 * 60_000);
    }
    const limit = options.holdAfterDeletionMs ?? 2 * 3_600_000;
    if (now - deletion.since < limit) return false;
    log.warn('request held for its outcome past holdAfterDeletionMs without one: released; the incident goes on, read it with status', {
      request: keyOf(entry.request),
      incidentId: entry.incidentId,
      holdAfterDeletionMs: limit,
    });
    return true;
  }

  /** Its MachineHealthCheck deleted the request: its own incident stops, unless removal began. */
  async function withdrawIncidentOf(entry: Tracked): Promise<void> {
    const key = keyOf(entry.request);
    if (!entry.incidentId || ended(entry)) return;
    // Another report's incident: that report still stands.
    if (entry.holder)
      return void log.info("request deleted; the incident it followed is another report's, and goes on", { request: key, incidentId: entry.incidentId });
    const { incidentId } = entry;
    const why = `EtcdRemediationRequest ${key} was deleted (its MachineHealthCheck withdrew it)`;
    const withinMs = options.withdrawWithinMs ?? 300_000;
    const until = runtime.clock.now() + withinMs;
    let tries = 0;
    // Undefined once the watcher stops or the time is up: then nobody asks any more.
    const outcome = await withdrawAgain.execute(async () => {
      if (ctx.isStopped() || runtime.clock.now() > until) return undefined;
      tries++;
      return withdrawIncident(runtime, incidentId, why);
    });
    if (outcome) log.info('request deleted', { request: key, incidentId, outcome: outcome.kind, ...(outcome.kind === 'too-late' ? { why: outcome.why } : {}) });
    else if (!ctx.isStopped())
      log.warn('request deleted, but its incident was not withdrawn: a step held it all along; the incident goes on', {
        request: key,
        incidentId,
        withinMs,
        tries,
      });
  }

  return { settleHold, deletionCause, withdrawIncidentOf };
}
