// etcd access for a cluster reached through Kubernetes: the direct path where configured, plus
// port-forward to each member's etcd pod and the exec relay through any healthy one. One workload
// snapshot per probe decides which pod serves which member, and where each member runs.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { kubeConfigFrom } from './kube-config.ts';

export { kubeConfigFrom };
import type { MachineSummary, PathName } from '../../core/common/index.ts';
import type { ClusterEtcd } from '../../ports/cluster-etcd.ts';
import type { Clock } from '../../ports/clock.ts';
import type { KubeAccessConfig } from '../../ports/kube-access.ts';
import type { EtcdMemberClient, EtcdTransport, EtcdUser, LookingPathResolver, PathLook, TlsFiles } from '../../ports/etcd.ts';
import { createEtcdGuards, createProber } from '../etcd/index.ts';
import { createExecRelayClient } from './exec-relay/exec-relay-client.ts';
import { createRelayRoutes } from './exec-relay/exec-relay-routes.ts';
import { hostEvidence, kubeSeeds, resolveKubePath } from './kube-paths.ts';
import { createMachineReader, type MachineRef } from './cluster-api/machines.ts';
import { machineApiOf } from './cluster-api/machine-api-version.ts';
import { createEtcdConnections } from './etcd-connections.ts';
import { createKubeMemberMetrics } from './kube-member-metrics.ts';
import { credentialsForCluster } from './etcd-credentials.ts';
import { createPodStreams } from './streams/pod-streams-client.ts';
import { readWorkload } from './workload.ts';

export interface KubeEtcdOptions {
  /** The operator's files; without them a Cluster API cluster's certificates are minted from its etcd CA (etcd-credentials.ts). */
  tls?: TlsFiles;
  /** The etcd user of the direct and port-forward clients and the guard's (the relay's etcdctl uses the pod's certificates). */
  auth?: EtcdUser;
  guardPrefix: string;
  callTimeoutMs: number;
  clock?: Clock;
}

const toSummary = ({ name, nodeName, deleting, uid }: MachineRef): MachineSummary => ({
  name,
  deleting,
  ...(nodeName ? { nodeName } : {}),
  ...(uid ? { uid } : {}),
});

const isKubePath = (path: PathName): boolean => path !== 'direct';

export function createKubeEtcd(access: KubeAccessConfig, options: KubeEtcdOptions): ClusterEtcd & { close(): Promise<void> } {
  const workload = kubeConfigFrom(access.workloadKubeconfig);
  const core = workload.makeApiClient(CoreV1Api);
  const etcdNamespace = access.etcdNamespace ?? 'kube-system';
  const streams = createPodStreams(workload);
  const management = access.management;
  const managementConfig = management ? kubeConfigFrom(management.kubeconfig) : undefined;
  const connections = createEtcdConnections(
    streams,
    credentialsForCluster(options.tls, management && managementConfig ? { ...management, config: managementConfig } : undefined),
    options.auth,
  );
  const relays = new Map<string, EtcdMemberClient>();
  // Which pods may relay for each member (from the last look), and which relayed last.
  const relayRoutes = createRelayRoutes();
  const relayOptions = {
    ...(access.relayTls ? { tls: access.relayTls } : {}),
    ...(access.relayBinary ? { binary: access.relayBinary } : {}),
    routes: relayRoutes,
  };
  const machines =
    management && managementConfig
      ? createMachineReader({
          customObjects: managementConfig.makeApiClient(CustomObjectsApi),
          clusterName: management.clusterName,
          version: machineApiOf(management, managementConfig),
        })
      : undefined;

  const transport: EtcdTransport = {
    client(target) {
      if (target.path !== 'exec-relay') return connections.client(target);
      let relay = relays.get(target.endpoint);
      if (!relay) {
        relay = createExecRelayClient(target, streams, relayOptions);
        relays.set(target.endpoint, relay);
      }
      return relay;
    },
    async close() {
      connections.close();
      relays.clear();
      await streams.close();
    },
  };

  const resolver: LookingPathResolver = {
    async look(paths, deadlineMs): Promise<PathLook> {
      const signal = AbortSignal.timeout(Math.max(1, deadlineMs));
      const directOnly: PathLook = { resolve: (m, p) => (p === 'direct' ? m.clientUrls[0] : undefined), seeds: [] };
      const machineList =
        machines && management
          ? machines.listControlPlaneMachines(management.namespace, { signal }).then(
              (list): MachineRef[] | string => list,
              (error: unknown) => String(error instanceof Error ? error.message : error),
            )
          : undefined;
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
        resolve: (member, path) =>
          path === 'direct'
            ? member.clientUrls[0]
            : path === 'exec-relay'
              ? relayRoutes.endpointFor(member, snapshot)
              : resolveKubePath(member, path, snapshot),
        seeds: kubeSeeds(snapshot, paths.filter(isKubePath)),
        host: (member) => hostEvidence(member, snapshot, known),
        ...(known ? { machines: known.map(toSummary) } : {}),
        ...(typeof listed === 'string' ? { failure: `the Machines were not read: ${listed}` } : {}),
      };
    },
  };

  const guards = createEtcdGuards({
    ...(options.auth ? { auth: options.auth } : {}),
    prefix: options.guardPrefix,
    deadlineMs: options.callTimeoutMs,
    // A port-forward holds the lock through its local port, with its connection's material.
    dial: (target) => connections.dial(target),
  });

  return {
    transport,
    prober: createProber(transport, resolver, options.clock),
    // Leader hygiene's scrape: a port-forward to each member's pod's metrics port, Status over its port-forward client.
    metrics: createKubeMemberMetrics({
      look: (signal) => readWorkload(core, etcdNamespace, signal),
      streams,
      transport,
      connections,
      ...(options.clock ? { clock: options.clock } : {}),
    }),
    guard: guards.at,
    async close() {
      guards.close();
      await transport.close();
    },
  };
}
