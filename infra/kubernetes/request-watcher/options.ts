// What the request watcher is given, and what it gives back.
import type { KubeConfig } from '@kubernetes/client-node';
import type { RemediationRequest } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { InProcessBus } from '../../../functions/adapters/local/in-process-bus.ts';
import type { OutboxDeps } from '../../../functions/app/common/index.ts';
import type { MachineApiVersion } from '../../../functions/ports/kube-access.ts';
import type { Log } from '../../../functions/ports/log.ts';

/** Where requests are reported, and where their incidents are followed. */
export interface ReportSink extends OutboxDeps {
  /** Validates and reports a MemberUnhealthy; throws when it is refused. */
  submit(detail: unknown, source?: string): Promise<unknown>;
  /** Events as they happen, where the sink can give them (the embedded runtime's bus). */
  subscribe?: InProcessBus['subscribe'];
}

export interface RequestWatcherOptions {
  management: KubeConfig;
  runtime: ReportSink;
  /** How often the incidents of open requests are read again from the store (default 2 s). */
  followIntervalMs?: number;
  /** How often, while a request awaits its replacement, the control plane is read for what holds it (default 10 s). */
  replacementLookMs?: number;
  /** The cluster id in the directory for a request's Cluster API cluster. */
  clusterIdOf(request: RemediationRequest): string;
  log: Log;
  /** First delay before starting a failed watch again; doubled up to 30 s. */
  restartDelayMs?: number;
  /**
   * How long the incident of a deleted request is asked to stop while a step holds it (default
   * 5 min); past it the incident goes on, and the log says so.
   */
  withdrawWithinMs?: number;
  /**
   * A report that opened no incident in this long is reported again (default 60 s): a report whose
   * every delivery failed (a Secret unreadable for a while) is a dead letter, not a stranded request.
   */
  reportAgainMs?: number;
  /**
   * A request still there this long after its incident closed as recovered is reported again
   * (default 5 min): its MachineHealthCheck, which deletes a request once the Machine is healthy,
   * still finds it unhealthy, so its word stands over our probes'.
   */
  recheckRecoveredMs?: number;
  /** The Cluster API version the Clusters, MachineHealthChecks and Machines are read in (default v1beta1). */
  clusterApiVersion?: MachineApiVersion;
  /** Who writes the Kubernetes Events (their reportingInstance; default the host's name, a pod's own). */
  eventInstance?: string;
  /**
   * A request the garbage collector deleted after its Machine (ours to delete) stays, held by the
   * finalizer, this long once its outcome is written (default 15 min), so `kubectl wait` and
   * `kubectl get` still read it after the replacement joined.
   */
  keepEndedMs?: number;
  /** ...and at most this long after its deletion when no outcome comes (default 2 h): a request is never held for ever. */
  holdAfterDeletionMs?: number;
  /** How often the MachineHealthChecks are looked over for ones competing with ours (default 5 min; the first look at start). */
  coexistenceScanMs?: number;
  /**
   * How often the Machine of a request that ended for a person (Blocked, Failed; annotated
   * skip-remediation) is read for that annotation's removal (default 30 s): one GET a request, not one a round.
   */
  releaseLookMs?: number;
}

export interface RequestWatcher {
  /** Resolves once the first list is in and every request in it is handled. */
  ready: Promise<void>;
  /** Why requests are not being watched now (no list in yet, or a dropped watch not back yet); undefined while they are. */
  notWatching(): string | undefined;
  stop(): Promise<void>;
}
