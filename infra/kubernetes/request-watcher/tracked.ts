// What the watcher knows of each request it follows, and what its parts share.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import {
  isTerminalPhase,
  type RemediationRequest,
  type RequestClient,
  type RequestStatus,
} from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { JournalEntry } from '../../../functions/core/incident/index.ts';
import type { Condition, InvolvedObject, ObjectEventSaid } from '../../../functions/core/kubernetes/index.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import type { MachineApiVersion } from '../../../functions/ports/kube-access.ts';
import type { Log } from '../../../functions/ports/log.ts';
import type { ReportSink, RequestWatcherOptions } from './options.ts';

export interface Tracked {
  request: RemediationRequest;
  clusterId: string;
  incidentId?: string;
  /** Set while the incident followed is another report's, holding this Machine's member. */
  holder?: Pick<Incident, 'incidentId' | 'target'>;
  /** When the request was last reported, while no incident is known for it. */
  reportedAt?: number;
  /** Incidents opened before this belong to an earlier report of the request. */
  since?: number;
  /** When its incident closed as recovered; the request is looked at again later. */
  recoveredAt?: number;
  /** Not reported: Cluster API holds it back, or could not be read; each follow round looks again. */
  held?: boolean;
  /** The incident whose removal under way was said to finish despite a hold (said once). */
  lateSaid?: string;
  /** The request's conditions as last written (or read), for their transition times. */
  conditions: Condition[];
  /** The Machine the Events of its decisions go on, once looked up. */
  machine?: Promise<InvolvedObject>;
  /** The last decision of a store-read incident said as an Event (only without the bus's events). */
  saidDecision?: string;
  /**
   * The status the request shows (its conditions aside: they follow from it), as the watch last
   * delivered it or we last wrote it; undefined once a write failed, so the next writes it whole.
   */
  shown?: Said;
  /** Status writes, one after the other, so the last status computed is the one that stays. */
  writes: Promise<void>;
  /** Reconciles of the request (a round's, an event's), one after the other: a read of the incident is never written after a newer one. */
  turn: Promise<void>;
  /** The incident's journal as read at a version of it (for the leader move it records). */
  journalRead?: { incidentId: string; version: number; journal: JournalEntry[] };
  /**
   * Its deletion, once seen (a deletionTimestamp under our finalizer, or the object gone): withdrawn
   * by its MachineHealthCheck (the Machine is there and healthy), or collected with the Machine.
   */
  deletion?: { cause: 'withdrawn' | 'collected'; since: number; endedAt?: number; settled?: boolean };
  /** The finalizer is being added or removed: one patch at a time. */
  patchingHold?: boolean;
  /** The Machine's ExternallyRemediated as last written (its reason, status and message). */
  machineSaid?: string;
  /**
   * Ended Blocked or Failed (a person must act): its Machine annotated skip-remediation so its MHC
   * goes on with its other Machines; a person removing the annotation reports the request again.
   */
  skipMarked?: boolean;
  /** When its Machine was last read for the skip-remediation annotation's removal. */
  releaseLookedAt?: number;
  /** What holds its replacement, in Cluster API's words (KCP's ScalingUp), while it awaits one; and when that was last read. */
  replacementHeld?: string;
  replacementLookedAt?: number;
  /** The hold the incident's journal last took (a line that failed is written on the next look); undefined once released. */
  replacementJournaled?: string;
  /** The one it should say now, and the writes of it, one after the other. */
  machineWanted?: Omit<Condition, 'observedGeneration'>;
  machineWrites?: Promise<void>;
}

export type Said = Omit<RequestStatus, 'updatedAt'>;

/** What the watcher's parts share: its options, its clients, and how a decision is told. */
export interface WatcherContext {
  options: RequestWatcherOptions;
  runtime: ReportSink;
  log: Log;
  customObjects: CustomObjectsApi;
  requests: RequestClient;
  /** The version Clusters, MachineHealthChecks, Machines and the control plane are read and written in. */
  machineApi: MachineApiVersion;
  isStopped(): boolean;
  /** A decision as a Kubernetes Event on the request's Machine; in the background, never failing the request. */
  tell(entry: Tracked, said: ObjectEventSaid): void;
}

/** Ended, as the request shows: followed no more, unless it is reported again. */
export const ended = (entry: Pick<Tracked, 'shown'>): boolean => isTerminalPhase(entry.shown?.phase);

export const keyOf = (r: Pick<RemediationRequest, 'namespace' | 'machineName'>): string => `${r.namespace}/${r.machineName}`;

/** The request's Machine: MHC names the request after it, in its namespace. */
export const machineOf = (r: Pick<RemediationRequest, 'namespace' | 'machineName'>): { namespace: string; name: string } => ({
  namespace: r.namespace,
  name: r.machineName,
});

/** A look made at most once every `everyMs`: due when never made, or that long ago. */
export const lookDue = (lastAt: number | undefined, everyMs: number, now: number): boolean => lastAt === undefined || now - lastAt >= everyMs;

export const describeInterval = (ms: number): string => (ms % 1_000 === 0 ? `${ms / 1_000} s` : `${ms} ms`);
