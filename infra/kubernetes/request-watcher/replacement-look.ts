// While a request's incident awaits its replacement: what holds the control plane's scale-up, in
// Cluster API's words, read now and then and said where a person looks.
import { replacementHold } from '../../../functions/adapters/kube/cluster-api/replacement-hold.ts';
import { journalSteps } from '../../../functions/core/incident/index.ts';
import { truncateNote } from '../../../functions/core/kubernetes/index.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { notCome } from './status-level.ts';
import { keyOf, lookDue, type Tracked, type WatcherContext } from './tracked.ts';

export function createReplacementLook(ctx: WatcherContext): (entry: Tracked, incident: Incident) => Promise<void> {
  const { runtime, options, log, customObjects, machineApi } = ctx;

  /**
   * While the incident awaits its replacement: reads what Cluster API says holds the control
   * plane's scale-up (KCP paused, its preflight checks), and when that changes says it as an Event
   * (the status says it from then on). At most once every replacementLookMs.
   */
  async function lookAtReplacement(entry: Tracked, incident: Incident): Promise<void> {
    const now = runtime.clock.now();
    if (!lookDue(entry.replacementLookedAt, options.replacementLookMs ?? 10_000, now)) return;
    entry.replacementLookedAt = now;
    const cluster = { namespace: entry.request.namespace, name: entry.request.clusterName ?? '' };
    const hold = await replacementHold(customObjects, machineApi, cluster).catch((error: unknown) => {
      log.warn('the control plane not read for what holds the replacement; read again later', { request: keyOf(entry.request), error: String(error) });
      return entry.replacementHeld;
    });
    // Into the incident's journal too, where status and the report read it: a line that cannot be
    // written now is said, and written on the next look; the request's status and Event say it meanwhile.
    if (hold !== entry.replacementJournaled)
      await runtime.store
        .appendJournal(incident.incidentId, {
          at: now,
          step: journalSteps.replacementChecked,
          detail: hold
            ? { reason: 'REPLACEMENT_HELD', message: notCome(hold) }
            : { reason: 'REPLACEMENT_RELEASED', message: "What held the control plane's scale-up no longer does." },
        })
        .then(
          () => void (entry.replacementJournaled = hold),
          (error: unknown) => log.warn('the replacement hold not journaled; written on the next look', { request: keyOf(entry.request), error: String(error) }),
        );
    if (hold === entry.replacementHeld) return;
    entry.replacementHeld = hold;
    if (hold) ctx.tell(entry, { reason: 'ReplacementHeld', note: truncateNote(notCome(hold)), type: 'Warning', action: 'CheckReplacement' });
    log.info(hold ? 'the replacement is held by the control plane' : 'the replacement is no longer held', {
      request: keyOf(entry.request),
      ...(hold ? { hold } : {}),
    });
  }

  return lookAtReplacement;
}
