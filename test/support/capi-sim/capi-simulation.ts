// A simulation of the Cluster API controllers an etcd remediation meets, beside the FAKE API
// server: the MachineHealthCheck controller (mhc.ts), the Machine controller's status (machine-status.ts), its deletion and the
// kubelet's side of a pod deletion (machine-deletion.ts), and KubeadmControlPlane (kcp.ts), each
// following kubernetes-sigs/cluster-api at ae7ff047 as its file says. It runs in rounds, each
// controller after the other, and writes its steps to a timeline.
//
// Not modelled: conditions' v1beta2/v1beta1 conversion (Machines are stored as v1beta1 objects
// with the v1beta2-only conditions under status.v1beta2, as Cluster API serves them in v1beta1),
// infrastructure and bootstrap objects (deleted at once), KCP's rollouts, retries limits
// (maxRetry, retryPeriod) and its kubeadm ConfigMap, MachineSets and workers, the Cluster's own
// conditions (the control plane counts as initialized and its infrastructure ready).
import { REQUEST_GROUP, REQUEST_PLURAL } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { KubeApiFake } from '../fakes/kube/api-server.ts';
import type { EtcdThroughNodes } from './etcd-through-node.ts';
import { kcpRound, type KcpState } from './kcp.ts';
import { kubeletRound, machineDeletionRound } from './machine-deletion.ts';
import { machineStatusRound } from './machine-status.ts';
import { mhcRound } from './mhc.ts';
import { simContext, type TimelineEntry } from './sim-context.ts';

export type { TimelineEntry } from './sim-context.ts';

export interface CapiSimulationOptions {
  fake: KubeApiFake;
  namespace: string;
  clusterName: string;
  /** The KubeadmControlPlane object's name (default `<cluster>-control-plane`). */
  controlPlaneName?: string;
  /** KubeadmControlPlane spec.replicas. */
  replicas: number;
  etcd: EtcdThroughNodes;
  provision(): Promise<{ machine: string }>;
  /** How often the controllers run (default 100 ms: their watches would wake them sooner). */
  intervalMs?: number;
  /** Machines whose control-plane components read unhealthy to KCP's strict preflight. */
  sickComponents?: Set<string>;
}

export interface CapiSimulation {
  readonly timeline: TimelineEntry[];
  readonly kcp: KcpState;
  /** When it started (Date.now()): the timeline's zero. */
  readonly startedAt: number;
  /** Rounds completed so far: a test waits on them to show a state lasts. */
  readonly rounds: number;
  /** The timeline as lines, "+1234 ms wl-cp-1: request created by …". */
  describe(): string;
  stop(): Promise<void>;
}

export function startCapiSimulation(options: CapiSimulationOptions): CapiSimulation {
  const timeline: TimelineEntry[] = [];
  const startedAt = Date.now();
  const sim = simContext(options.fake, timeline, startedAt);
  const kcp: KcpState = { annotations: {} };
  let stopped = false;
  let round: Promise<void> = Promise.resolve();
  let running = false;
  let rounds = 0;
  const kcpOptions = {
    namespace: options.namespace,
    clusterName: options.clusterName,
    name: options.controlPlaneName ?? `${options.clusterName}-control-plane`,
    replicas: options.replicas,
    etcd: options.etcd,
    provision: () => options.provision(),
    ...(options.sickComponents ? { sickComponents: options.sickComponents } : {}),
  };
  const once = async (): Promise<void> => {
    machineStatusRound(sim);
    mhcRound(sim, { requestResource: { group: REQUEST_GROUP, plural: REQUEST_PLURAL } });
    kubeletRound(sim);
    machineDeletionRound(sim);
    await kcpRound(sim, kcpOptions, kcp);
    rounds += 1;
  };
  const timer = setInterval(() => {
    // One round at a time: a slow etcd call does not pile rounds up.
    if (stopped || running) return;
    running = true;
    round = once()
      .catch((error: unknown) => sim.said('simulation', `round failed: ${(error as Error).message}`))
      .finally(() => (running = false));
  }, options.intervalMs ?? 100);
  return {
    timeline,
    kcp,
    startedAt,
    get rounds() {
      return rounds;
    },
    describe: () => timeline.map((e) => `+${e.at} ms ${e.about}: ${e.what}`).join('\n'),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await round;
      await kcp.provisioning;
    },
  };
}
