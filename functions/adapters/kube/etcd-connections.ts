// The etcd3 clients of one cluster reached through Kubernetes, each connection made with the
// cluster's credentials of the moment (etcd-credentials.ts): one client per direct client URL and
// one per port-forward, and what the cluster lock dials beside them (the same URL and material).
import type { EndpointTarget, EtcdUser, TlsFiles } from '../../ports/etcd.ts';
import type { EtcdClientCredentials } from './etcd-credentials.ts';
import { createPortForwardClient, type PortForwardAccess } from './port-forward/port-forward-client.ts';
import { createRenewingClient, type RenewingClient } from './renewing-client.ts';
import type { PodStreams } from './streams/pod-streams.ts';

export interface EtcdConnections {
  /** The client of a direct or port-forward target, kept per endpoint. */
  client(target: EndpointTarget): RenewingClient;
  /** What another etcd client dials for the target (the cluster lock); undefined for the exec relay, which cannot hold a lease. */
  dial(target: EndpointTarget): Promise<{ endpoint: string; tls?: TlsFiles } | undefined>;
  close(): void;
}

export function createEtcdConnections(streams: PodStreams, credentials: EtcdClientCredentials, auth?: EtcdUser): EtcdConnections {
  const direct = new Map<string, RenewingClient>();
  const forwards = new Map<string, PortForwardAccess>();
  const options = { credentials, ...(auth ? { auth } : {}) };

  const directOf = (target: EndpointTarget): RenewingClient => {
    let client = direct.get(target.endpoint);
    if (!client) {
      // A plain http client URL needs no material: no Secret is read for it.
      client = createRenewingClient(target, { ...options, endpoint: () => Promise.resolve(target.endpoint), needsTls: target.endpoint.startsWith('https://') });
      direct.set(target.endpoint, client);
    }
    return client;
  };
  const forwardOf = (target: EndpointTarget): PortForwardAccess => {
    let forward = forwards.get(target.endpoint);
    if (!forward) {
      forward = createPortForwardClient(target, streams, options);
      forwards.set(target.endpoint, forward);
    }
    return forward;
  };

  return {
    client: (target) => (target.path === 'direct' ? directOf(target) : forwardOf(target).client),
    dial: async (target) => (target.path === 'direct' ? directOf(target).current() : target.path === 'port-forward' ? forwardOf(target).dial() : undefined),
    close() {
      for (const client of [...direct.values(), ...[...forwards.values()].map((f) => f.client)]) client.close();
      direct.clear();
      forwards.clear();
    },
  };
}
