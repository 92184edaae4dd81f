// A request left Blocked or Failed, released so its MachineHealthCheck goes on with its other
// Machines, and reported again once a person says the cause is fixed.
import type { GateLook } from '../../../functions/adapters/kube/cluster-api/remediation-gate.ts';
import { markSkipRemediation, SKIP_REMEDIATION_ANNOTATION, skipRemediationOf } from '../../../functions/adapters/kube/cluster-api/machine-skip.ts';
import { truncateNote } from '../../../functions/core/kubernetes/index.ts';
import { keyOf, lookDue, machineOf, type Tracked, type WatcherContext } from './tracked.ts';

export interface Release {
  releaseIfEnded(entry: Tracked): void;
  reportAgainOnceReleased(entry: Tracked, look: GateLook): Promise<void>;
}

/** What releasing needs of the watcher: to let go of the incident, and to report the request again. */
export interface ReleaseDeps {
  detach(entry: Tracked): void;
  reportIfAllowed(entry: Tracked, look: GateLook, words: string, observedNow?: boolean): Promise<boolean>;
  followSoon(entry: Tracked): void;
}

export function createRelease(ctx: WatcherContext, deps: ReleaseDeps): Release {
  const { runtime, options, log, customObjects, machineApi } = ctx;

  /**
   * A request left Blocked or Failed would starve its MachineHealthCheck's other Machines (MHC
   * returns at the first unhealthy Machine that already has a request): its Machine is annotated
   * skip-remediation, which takes it out of MHC's targets while the request, its status, the
   * Machine's condition and Events stay for a person. In the background; said in the log and as
   * an Event.
   */
  function releaseIfEnded(entry: Tracked): void {
    const status = entry.shown;
    if (!status || (status.phase !== 'Blocked' && status.phase !== 'Failed') || entry.skipMarked || entry.deletion) return;
    entry.skipMarked = true;
    const why = `etcd-remediator: ${status.reasonCode ?? status.phase} (incident ${status.incidentId ?? entry.incidentId ?? 'unknown'}); remove this annotation to have the Machine remediated again`;
    markSkipRemediation(customObjects, machineApi, machineOf(entry.request), why).then(
      (marked) => {
        if (!marked) return;
        log.info('request ended for a person to act; its Machine annotated skip-remediation so its MachineHealthCheck goes on with its other Machines', {
          request: keyOf(entry.request),
        });
        ctx.tell(entry, {
          reason: 'SkipRemediation',
          note: truncateNote(
            `${SKIP_REMEDIATION_ANNOTATION} set: this request ended ${status.phase}, and while it stands its MachineHealthCheck would create no request for its other unhealthy Machines. Remove the annotation once the cause is fixed: the request is then reported again.`,
          ),
          type: 'Warning',
          action: 'Release',
        });
      },
      (error: unknown) => {
        entry.skipMarked = false;
        log.warn('Machine not annotated skip-remediation; tried again on the next round', { request: keyOf(entry.request), error: String(error) });
      },
    );
  }

  /** A person removed the annotation from a Machine whose request ended Blocked or Failed: reported again. */
  async function reportAgainOnceReleased(entry: Tracked, look: GateLook): Promise<void> {
    const now = runtime.clock.now();
    if (!lookDue(entry.releaseLookedAt, options.releaseLookMs ?? 30_000, now)) return;
    entry.releaseLookedAt = now;
    const value = await skipRemediationOf(customObjects, machineApi, machineOf(entry.request));
    if (value !== undefined) return;
    deps.detach(entry);
    Object.assign(entry, { skipMarked: false, since: now - 1_000 });
    log.info(`${SKIP_REMEDIATION_ANNOTATION} removed from the Machine of a request that ended for a person to act; reporting it again`, {
      request: keyOf(entry.request),
    });
    if (await deps.reportIfAllowed(entry, look, `${SKIP_REMEDIATION_ANNOTATION} was removed from the Machine: reported again`, true)) deps.followSoon(entry);
  }

  return { releaseIfEnded, reportAgainOnceReleased };
}
