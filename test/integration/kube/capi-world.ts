// The kube world with Cluster API running in it (test/support/capi-sim): a control plane of three
// kubeadm machines, each Node running one Deployment pod besides its static pods (what drain must
// evict), a MachineHealthCheck over the control-plane Machines, and KCP keeping three replicas,
// its replacements joined to the real etcd. `external: true` gives the MHC our remediation
// template, as the README's example does; without it, KCP remediates alone.
import { REQUEST_GROUP, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { readClientTls } from '../../../infra/lab/lab-pki.ts';
import { MHCS, dressKubeadmNode } from '../../support/capi-sim/capi-objects.ts';
import { startCapiSimulation, type CapiSimulation } from '../../support/capi-sim/capi-simulation.ts';
import { etcdThroughNodes } from '../../support/capi-sim/etcd-through-node.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, type KubeWorld, type KubeWorldOptions } from './kube-world.ts';

export const MHC_NAME = 'wl-control-plane';
export const TEMPLATE_NAME = 'etcd-remediator';
const TEMPLATES = resourceType(REQUEST_GROUP, 'etcdremediationrequesttemplates')!;
const CLUSTERS = resourceType('cluster.x-k8s.io', 'clusters')!;
const KCPS = resourceType('controlplane.cluster.x-k8s.io', 'kubeadmcontrolplanes')!;
export const KCP_NAME = `${CAPI_CLUSTER}-control-plane`;

export interface CapiWorldOptions extends KubeWorldOptions {
  /** The MHC hands its Machines to our remediation (its template), instead of to KCP. */
  external: boolean;
  /** How long a Node condition must hold before MHC calls the Machine unhealthy (default 1 s). */
  unhealthyAfterSeconds?: number;
  /** A stopped kubelet's Node goes Unknown after this long (default 1 s; the controller's default is 40 s). */
  nodeMonitorGracePeriodMs?: number;
  /** The kubelet posts Ready False this long after its runtime stops (default 500 ms; 30 s in the kubelet). */
  runtimeDownNoticedMs?: number;
  /** MHC's maxUnhealthy (default 1). */
  maxUnhealthy?: number;
  /** Machines whose control-plane components KCP's strict preflight reads as unhealthy (changeable while it runs). */
  sickComponents?: Set<string>;
}

export interface CapiWorld {
  world: KubeWorld;
  sim: CapiSimulation;
  /** The Machines whose components KCP's strict preflight reads as unhealthy: a case may change it while it runs. */
  sickComponents: Set<string>;
  down(): Promise<void>;
}

export async function startCapiWorld(options: CapiWorldOptions): Promise<CapiWorld> {
  const world = await startKubeWorld(3, options);
  const { fake, lab } = world;
  fake.nodeMonitorGracePeriodMs = options.nodeMonitorGracePeriodMs ?? 1_000;
  fake.runtimeDownNoticedMs = options.runtimeDownNoticedMs ?? 500;
  for (const member of lab.members) dressKubeadmNode(fake, member.name);
  const timeout = `${options.unhealthyAfterSeconds ?? 1}s`;
  // The Cluster and its KubeadmControlPlane, as Cluster API keeps them (v1beta1, as the Machines are).
  fake.store.put(CLUSTERS, {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Cluster',
    metadata: { name: CAPI_CLUSTER, namespace: CAPI_NAMESPACE },
    spec: { controlPlaneRef: { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1', kind: 'KubeadmControlPlane', name: KCP_NAME, namespace: CAPI_NAMESPACE } },
  });
  fake.store.put(KCPS, {
    apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
    kind: 'KubeadmControlPlane',
    metadata: { name: KCP_NAME, namespace: CAPI_NAMESPACE, labels: { 'cluster.x-k8s.io/cluster-name': CAPI_CLUSTER } },
    spec: { replicas: 3, version: 'v1.33.4' },
  });
  fake.store.put(MHCS, {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'MachineHealthCheck',
    metadata: { name: MHC_NAME, namespace: CAPI_NAMESPACE },
    spec: {
      clusterName: CAPI_CLUSTER,
      selector: { matchLabels: { 'cluster.x-k8s.io/control-plane': '' } },
      unhealthyConditions: [
        { type: 'Ready', status: 'Unknown', timeout },
        { type: 'Ready', status: 'False', timeout },
      ],
      maxUnhealthy: options.maxUnhealthy ?? 1,
      ...(options.external
        ? { remediationTemplate: { apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`, kind: 'EtcdRemediationRequestTemplate', name: TEMPLATE_NAME } }
        : {}),
    },
  });
  if (options.external)
    fake.store.put(TEMPLATES, {
      apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`,
      kind: 'EtcdRemediationRequestTemplate',
      metadata: { name: TEMPLATE_NAME, namespace: CAPI_NAMESPACE },
      spec: { template: { spec: { reason: `MachineHealthCheck ${MHC_NAME}: Node not Ready for ${timeout}` } } },
    });
  const sickComponents = options.sickComponents ?? new Set<string>();
  const clientUrlOf = (node: string): string | undefined => lab.members.find((m) => m.name === node)?.clientUrl;
  const sim = startCapiSimulation({
    fake,
    namespace: CAPI_NAMESPACE,
    clusterName: CAPI_CLUSTER,
    replicas: 3,
    controlPlaneName: KCP_NAME,
    sickComponents,
    etcd: etcdThroughNodes(fake, clientUrlOf, lab.tls ? readClientTls(lab.tls) : undefined),
    async provision() {
      const { member, machine } = await world.joinReplacementMachine();
      dressKubeadmNode(fake, member.name);
      return { machine };
    },
  });
  return {
    world,
    sim,
    sickComponents,
    async down() {
      try {
        await sim.stop();
      } finally {
        await world.down();
      }
    },
  };
}
