// The etcd transport: one cached member client per (endpoint, path).
import type { EndpointTarget, EtcdMemberClient, EtcdTransport } from '../../ports/etcd.ts';
import { createMemberClient, type ClosableMemberClient, type MemberClientOptions } from './member-client.ts';

export type Etcd3TransportOptions = MemberClientOptions;

export function createEtcd3Transport(options: Etcd3TransportOptions = {}): EtcdTransport {
  const clients = new Map<string, ClosableMemberClient>();
  return {
    client(target: EndpointTarget): EtcdMemberClient {
      const key = `${target.path} ${target.endpoint}`;
      let client = clients.get(key);
      if (!client) {
        client = createMemberClient(target, options);
        clients.set(key, client);
      }
      return client;
    },
    async close(): Promise<void> {
      const all = [...clients.values()];
      clients.clear();
      for (const client of all) client.close();
    },
  };
}
