// The port-forward path as an etcd member client: the etcd3 client dials a loopback port, and
// each connection it opens is forwarded by the workload API server and the node's kubelet to the
// pod's 2379, as KCP reaches etcd. When the stream cannot open, gRPC only sees a closed socket,
// so the failure is taken from the forward, which read the API server's own answer. The local URL
// is https when the connection has TLS material (kubeadm's server certificates name 127.0.0.1).
import { EtcdCallError, type EndpointTarget, type TlsFiles } from '../../../ports/etcd.ts';
import type { MemberClientOptions } from '../../etcd/index.ts';
import type { EtcdClientCredentials } from '../etcd-credentials.ts';
import { parsePortForwardEndpoint } from '../kube-paths.ts';
import { createRenewingClient, type Diagnose, type RenewingClient } from '../renewing-client.ts';
import type { LocalForward, PodStreams } from '../streams/pod-streams.ts';

export interface PortForwardClientOptions extends Omit<MemberClientOptions, 'tls'> {
  credentials: EtcdClientCredentials;
  now?: () => number;
}

export interface PortForwardAccess {
  client: RenewingClient;
  /** The local URL and TLS files of the forward's connection, for other etcd clients (the cluster lock). */
  dial(): Promise<{ endpoint: string; tls?: TlsFiles }>;
}

export function createPortForwardClient(target: EndpointTarget, streams: PodStreams, options: PortForwardClientOptions): PortForwardAccess {
  const pod = parsePortForwardEndpoint(target.endpoint);
  let opening: Promise<LocalForward> | undefined;
  const open = (): Promise<LocalForward> => {
    if (!opening) {
      const started = streams.forward({ namespace: pod.namespace, name: pod.name }, pod.port);
      // A failed open is not cached: the next call tries again.
      started.catch(() => {
        if (opening === started) opening = undefined;
      });
      opening = started;
    }
    return opening;
  };

  const localUrl = async (secure: boolean): Promise<string> => {
    try {
      return `${secure ? 'https' : 'http'}://127.0.0.1:${(await open()).port}`;
    } catch (error) {
      throw new EtcdCallError(
        { kind: 'other', message: `port-forward to ${target.endpoint}: no local port: ${error instanceof Error ? error.message : String(error)}` },
        { cause: error },
      );
    }
  };

  const diagnose: Diagnose = async (error, { sinceMs, remainingMs, secure }) => {
    const forward = await open().catch(() => undefined);
    if (!forward) return error;
    // Wait only for connections still being diagnosed, and never past the caller's deadline.
    const failure = (await forward.failuresSince(sinceMs, Math.max(50, remainingMs))).at(-1);
    if (failure) return new EtcdCallError({ kind: failure.reachability, message: failure.message }, { cause: error });
    // etcd speaks first on plain http and answers a TLS hello over TLS: a port that hangs up unheard
    // serves the other one. TLS, not refused: the member is alive, its scheme is not ours.
    if (forward.hangUpsSince(sinceMs) === 0) return error;
    const where = `port-forward to ${pod.namespace}/${pod.name}: port ${pod.port} in the pod closed the connection without answering`;
    return new EtcdCallError(
      { kind: 'tls', message: secure ? `${where} the TLS hello: the member serves plain http` : `${where} plain http: the member serves TLS` },
      { cause: error },
    );
  };

  const client = createRenewingClient(target, { ...options, endpoint: localUrl, diagnose });
  return { client, dial: () => client.current() };
}
