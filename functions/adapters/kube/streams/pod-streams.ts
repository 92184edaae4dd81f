// The two streaming subresources the etcd paths ride on, as the rest of the kube adapter sees
// them: exec (the relay's etcdctl) and port-forward (a loopback port in front of a pod's 2379).
// What failed and why is classified here, from the API server's own answer, so a message can say
// "kubelet not responding" or "containerd down" rather than "Unexpected server response: 500".
// Implemented by createPodStreams (pod-streams-client.ts).
import type { Reachability } from '../../../core/common/index.ts';

export interface PodRef {
  namespace: string;
  name: string;
  /** The container to exec in; kubeadm's static pod has one, named `etcd`. */
  container?: string;
}

/** Why the API server (or the kubelet behind it) would not open the stream. */
export type StreamFailureCause =
  /** The API server could not dial the node's kubelet (HTTP 500 JSON Status, "error dialing backend"). */
  | 'kubelet-down'
  /** The kubelet answered but its container runtime did not (HTTP 500, plain-text gRPC error). */
  | 'containerd-down'
  /** The pod's Node object is gone (404 naming the node as `pods "<node>"`). */
  | 'node-gone'
  /** The pod itself is gone (404 naming the pod). */
  | 'pod-gone'
  /** RBAC: needs get and create on pods/exec and pods/portforward (403). */
  | 'forbidden'
  /** The API server itself did not answer (refused, reset, TLS, DNS). */
  | 'api-unreachable'
  /** The stream opened, but nothing listens on the pod's port (port-forward error channel). */
  | 'not-listening'
  /** The runtime could not start the command: no such binary in the container's image (exec Status, §4, §6). */
  | 'binary-missing'
  | 'timeout'
  | 'other';

export class PodStreamError extends Error {
  readonly why: StreamFailureCause;
  /** How a prober reports it: a kubelet or runtime that is down reads as 'refused'. */
  readonly reachability: Exclude<Reachability, 'ok'>;
  /** The HTTP status of a refusal before the upgrade, when there was one. */
  readonly status?: number;
  constructor(message: string, why: StreamFailureCause, reachability: Exclude<Reachability, 'ok'>, status?: number) {
    super(message);
    this.name = 'PodStreamError';
    this.why = why;
    this.reachability = reachability;
    if (status !== undefined) this.status = status;
  }
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  /** From the Status on channel 3; null when the command was killed without one. */
  exitCode: number | null;
}

export interface LocalForward {
  /** Loopback port: each accepted connection gets its own WebSocket to the pod. */
  readonly port: number;
  /**
   * The stream failures of connections accepted at or after `sinceMs` (performance.now()), one
   * per failed connection in accept order, once every such connection has settled or `waitMs`
   * ran out. A connection settles when the pod's side answered (bytes after the port prefix),
   * when it failed and was diagnosed (a refused upgrade, or text on the error channel), or when
   * its stream ended. Only the last 256 connections are remembered.
   */
  failuresSince(sinceMs: number, waitMs: number): Promise<PodStreamError[]>;
  /**
   * How many connections accepted at or after `sinceMs` the pod's port closed without a byte:
   * etcd always speaks first on HTTP/2, so this is a TLS port spoken to in plain text. Read after
   * failuresSince, once they have settled.
   */
  hangUpsSince(sinceMs: number): number;
  close(): Promise<void>;
}

export interface PodStreams {
  /**
   * Runs argv in the pod and resolves with its output and exit code. Rejects with a
   * PodStreamError when the exec itself could not run (never for the command's own failure).
   */
  exec(pod: PodRef, argv: string[], deadlineMs: number): Promise<ExecResult>;
  /** A loopback port forwarded to `port` of the pod, opened lazily per connection. */
  forward(pod: PodRef, port: number): Promise<LocalForward>;
  close(): Promise<void>;
}
