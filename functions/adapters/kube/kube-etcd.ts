// etcd access for a cluster reached through Kubernetes: the direct path where configured, plus
// port-forward to each member's etcd pod and the exec relay through a healthy one. One workload
// snapshot per probe decides which pod serves which member, and where each member runs.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { kubeConfigFrom } from './kube-config.ts';

export { kubeConfigFrom };
import type { MachineSummary, PathName } from '../../core/types.ts';
import type { ClusterEtcd } from '../../ports/cluster-etcd.ts';
import type { Clock } from '../../ports/clock.ts';
import type { KubeAccessConfig } from '../../ports/kube-access.ts';
import type { EndpointTarget, EtcdMemberClient, EtcdTransport, EtcdUser, LookingPathResolver, PathLook, TlsFiles } from '../../ports/etcd.ts';
import { createEtcd3Transport } from '../etcd/transport.ts';
import { createEtcdGuards } from '../etcd/etcd-guard.ts';
import { createProber } from '../etcd/prober.ts';
import { createExecRelayClient } from './exec-relay/exec-relay-client.ts';
import { hostEvidence, kubeSeeds, resolveKubePath } from './kube-paths.ts';
import { createMachineReader, type MachineRef } from './cluster-api/machines.ts';
import { createPortForwardClient, type PortForwardAccess } from './port-forward/port-forward-client.ts';
import { createPodStreams } from './streams/pod-streams-client.ts';
import { readWorkload } from './workload.ts';

export interface KubeEtcdOptions {
  tls?: TlsFiles;
  /** The etcd user of the direct and port-forward clients and the guard's (the relay's etcdctl uses the pod's certificates). */
  auth?: EtcdUser;
  guardPrefix: string;
  callTimeoutMs: number;
  clock?: Clock;
}

const toSummary = ({ name, nodeName, deleting }: MachineRef): MachineSummary => ({ name, deleting, ...(nodeName ? { nodeName } : {}) });

const isKubePath = (path: PathName): boolean => path !== 'direct';

export function createKubeEtcd(access: KubeAccessConfig, options: KubeEtcdOptions): ClusterEtcd & { close(): Promise<void> } {
  const workload = kubeConfigFrom(access.workloadKubeconfig);
  const core = workload.makeApiClient(CoreV1Api);
  const etcdNamespace = access.etcdNamespace ?? 'kube-system';
  const streams = createPodStreams(workload);
  const credentials = { ...(options.tls ? { tls: options.tls } : {}), ...(options.auth ? { auth: options.auth } : {}) };
  const direct = createEtcd3Transport(credentials);
  const forwards = new Map<string, PortForwardAccess>();
  const relays = new Map<string, EtcdMemberClient>();
  const management = access.management;
  const machines = management
    ? createMachineReader({
        customObjects: kubeConfigFrom(management.kubeconfig).makeApiClient(CustomObjectsApi),
        clusterName: management.clusterName,
        ...(management.machineApiVersion ? { version: management.machineApiVersion } : {}),
      })
    : undefined;

  const forwardOf = (target: EndpointTarget): PortForwardAccess => {
    let forward = forwards.get(target.endpoint);
    if (!forward) {
      forward = createPortForwardClient(target, streams, { ...credentials, secure: options.tls !== undefined });
      forwards.set(target.endpoint, forward);
    }
    return forward;
  };

  const transport: EtcdTransport = {
    client(target) {
      if (target.path === 'direct') return direct.client(target);
      if (target.path === 'port-forward') return forwardOf(target).client;
      let relay = relays.get(target.endpoint);
      if (!relay) {
        relay = createExecRelayClient(target, streams, access.relayTls ? { tls: access.relayTls } : {});
        relays.set(target.endpoint, relay);
      }
      return relay;
    },
    async close() {
      for (const forward of forwards.values()) forward.client.close();
      forwards.clear();
      relays.clear();
      await Promise.all([direct.close(), streams.close()]);
    },
  };

  const resolver: LookingPathResolver = {
    async look(paths, deadlineMs): Promise<PathLook> {
      const signal = AbortSignal.timeout(Math.max(1, deadlineMs));
      const directOnly: PathLook = { resolve: (m, p) => (p === 'direct' ? m.clientUrls[0] : undefined), seeds: [] };
      const machineList = machines && management ? machines.listControlPlaneMachines(management.namespace, { signal }).then((list): MachineRef[] | string => list, (error: unknown) => String(error instanceof Error ? error.message : error)) : undefined;
      let snapshot;
      try {
        snapshot = await readWorkload(core, etcdNamespace, signal);
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        const listed = await machineList;
        const machines = Array.isArray(listed) ? { machines: listed.map(toSummary) } : {};
        return { ...directOnly, ...machines, failure: `the workload cluster did not answer, so only the direct path is probed: ${why}` };
      }
      const listed = await machineList;
      const known = Array.isArray(listed) ? listed : undefined;
      return {
        resolve: (member, path) => (path === 'direct' ? member.clientUrls[0] : resolveKubePath(member, path, snapshot)),
        seeds: kubeSeeds(snapshot, paths.filter(isKubePath)),
        host: (member) => hostEvidence(member, snapshot, known),
        ...(known ? { machines: known.map(toSummary) } : {}),
        ...(typeof listed === 'string' ? { failure: `the Machines were not read: ${listed}` } : {}),
      };
    },
  };

  const guards = createEtcdGuards({
    ...credentials,
    prefix: options.guardPrefix,
    deadlineMs: options.callTimeoutMs,
    // A port-forward holds the lock through its local port; the relay cannot hold a lease.
    dial: async (target) => (target.path === 'direct' ? target.endpoint : target.path === 'port-forward' ? forwardOf(target).localUrl() : undefined),
  });

  return {
    transport,
    prober: createProber(transport, resolver, options.clock),
    guard: guards.at,
    async close() {
      guards.close();
      await transport.close();
    },
  };
}
