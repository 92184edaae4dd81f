// Case 20: faults on the Kubernetes paths (kubelet down, containerd down, Node deleted, the workload
// API server unreachable). Each row runs in the kube scenarios' world (kube-world.ts): a real lab
// named cp-N serving etcd over TLS as kubeadm does (its CA in the Secret wl-etcd only), behind the
// FAKE API server, which serves the etcd pods and the Cluster API Machines, so the pipeline gets
// the Machine actuator and every removal ends with the Machine deleted, once.
import { createServer, type AddressInfo } from 'node:net';
import { REMEDIATED_ANNOTATION } from '../../functions/adapters/kube/cluster-api/machine-actuator.ts';
import type { PolicyInput } from '../../functions/core/policy/policy.ts';
import type { LabMember } from '../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../infra/runtime/runtime.ts';
import { KUBE_CALL_TIMEOUT_MS, type Pipeline } from '../integration/e2e/pipeline.ts';
import { startKubeWorld, worldEtcdTls, type KubeWorld } from '../integration/kube/kube-world.ts';
import { check, hostOf, says, type Checked, type MatrixCase, type StartedCluster } from './harness.ts';
import { membershipIs, removedWithNewLeader } from './lab-checks.ts';

/**
 * Only the ways Cluster API reaches etcd: no client URL configured, the members found through their
 * pods. With the kube scenarios' call deadline (KUBE_CALL_TIMEOUT_MS says why).
 */
const KUBE_ONLY: PolicyInput = { pathOrder: ['port-forward', 'exec-relay'], callTimeoutMs: KUBE_CALL_TIMEOUT_MS };

const podOf = (m: LabMember): string => `kube-system/etcd-${m.name}`;

interface Seen {
  world: KubeWorld;
  pipeline: Pipeline;
  target: LabMember;
  outcome: TerminalEvent;
  deciding: Checked['deciding'];
  /** The workload API server's URL the pipeline was given, when the row made it unreachable. */
  unreachableApi?: string;
}

interface KubeRow extends Pick<MatrixCase, 'name' | 'expected' | 'reason' | 'fast' | 'policy'> {
  /** The direct path beside the kube ones (client URLs configured), and a workload API server nothing answers on. */
  workloadUnreachable?: boolean;
  /** Breaks something and returns the member to report. */
  arrange: (world: KubeWorld) => Promise<LabMember>;
  verify: (seen: Seen) => Promise<string[]>;
}

/** A loopback URL nothing listens on: a port the OS just handed out, closed again (refused from then on). */
async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** The Machine got the removal record, then was deleted, once (the fake keeps it deleting, as CAPI drains). */
async function machineReplaced({ world, target, outcome }: Seen): Promise<string[]> {
  const name = world.machineOf(target);
  const machine = await world.readMachine(name);
  const record = JSON.parse(machine?.annotations[REMEDIATED_ANNOTATION] ?? '{}') as { member?: string; incidentId?: string };
  const deletes = world.fake.requestCount('DELETE', `/machines/${name}`);
  return [
    ...check(machine?.deleting === true, `Machine ${name} is not being deleted: ${JSON.stringify(machine)}`),
    ...check(record.member === target.name && record.incidentId === outcome.detail.incidentId, `Machine ${name} record ${JSON.stringify(record)}`),
    ...check(deletes === 1, `Machine ${name} deleted ${deletes} times`),
  ];
}

/** The LeaderMoved event, if any. */
const leaderMoved = (pipeline: Pipeline): { from?: string; to?: string; path?: string } | undefined =>
  pipeline.events.find((e) => e.detailType === 'LeaderMoved')?.detail;

/** The views the pipeline decided on, from every MembersProbed. */
const viewsOf = (pipeline: Pipeline): { pathLookFailure?: string; members: { name: string; paths: { path: string }[] }[] }[] =>
  pipeline.events.flatMap((e) => (e.detailType === 'MembersProbed' ? [e.detail.view] : []));

/**
 * A case-20 row on a fresh kube world. The harness downs the lab and then calls down(), whose
 * world.down() stops the fake and downs the lab again: lab.down() is idempotent (one shutdown, shared).
 */
function onKubeWorld(row: KubeRow): MatrixCase {
  const { arrange, verify, workloadUnreachable, ...shown } = row;
  let world: KubeWorld | undefined;
  let unreachableApi: string | undefined;
  return {
    ...shown,
    n: 20,
    members: 3,
    async start(): Promise<StartedCluster> {
      const started = (world = await startKubeWorld(3));
      try {
        // The management side (the Machines) stays on the fake: only the workload cluster's API is gone.
        if (workloadUnreachable) unreachableApi = await refusedUrl();
        const workloadKubeconfig = unreachableApi
          ? started.access.workloadKubeconfig.replace(started.fake.server, unreachableApi)
          : started.access.workloadKubeconfig;
        const kube = { ...started.access, workloadKubeconfig };
        // The quorum checker asks etcd itself, with the test's own client certificate.
        const checkerTls = worldEtcdTls(started).tls;
        return {
          lab: started.lab,
          pipelineOptions: workloadUnreachable ? { kube } : { kube, endpoints: [] },
          ...(checkerTls ? { checkerTls } : {}),
          down: () => started.down(),
        };
      } catch (error) {
        await started.down();
        throw error;
      }
    },
    async arrange() {
      return { targets: [await arrange(world!)] };
    },
    verify: ({ pipeline, arranged }, { outcomes, deciding }) =>
      verify({ world: world!, pipeline, target: arranged.targets[0]!, outcome: outcomes[0]!, deciding, ...(unreachableApi ? { unreachableApi } : {}) }),
  };
}

/**
 * The sick leader's port-forward fails for `why` (its node's kubelet or containerd is down), and
 * the exec relay, run in another member's pod, moves leadership off it (README "Cluster API").
 */
function movedOverRelay(name: string, breakNode: (world: KubeWorld, node: string) => void, why: string, fast = false): MatrixCase {
  return onKubeWorld({
    name,
    expected: 'removed',
    reason: 'LEADER_MOVED',
    fast,
    policy: KUBE_ONLY,
    async arrange(world) {
      const leader = await world.lab.leader();
      breakNode(world, leader.name);
      return leader;
    },
    async verify(seen) {
      const { world, pipeline, target: leader, outcome, deciding } = seen;
      const moved = leaderMoved(pipeline);
      return [
        ...says('approval', deciding.message, [
          leader.name,
          `port-forward ${podOf(leader)}:2379`,
          why,
          `over exec-relay ${leader.clientUrl} via kube-system/etcd-cp-`,
        ]),
        // The relay's etcdctl runs in a pod whose node is up: never the sick leader's own.
        ...check(!deciding.message.includes(`via ${podOf(leader)}`), `the relay ran in the sick leader's own pod ${podOf(leader)}`),
        ...check(moved?.from === leader.id && moved.path === 'exec-relay', `LeaderMoved ${JSON.stringify(moved)}`),
        ...check(JSON.stringify(pipeline.calls.moveLeader) === JSON.stringify([moved?.to]), `MoveLeader calls ${pipeline.calls.moveLeader.join(',')}`),
        ...removedWithNewLeader(outcome, leader, 'moved'),
        ...(await membershipIs(world.lab, [leader])),
        ...(await machineReplaced(seen)),
      ];
    },
  });
}

export const kubeCases: MatrixCase[] = [
  movedOverRelay('kube-kubelet-down', (world, node) => world.fake.kubeletDown(node), "the kubelet on the pod's node is not responding", true),
  movedOverRelay('kube-containerd-down', (world, node) => world.fake.containerdDown(node), 'containerd.sock'),
  onKubeWorld({
    name: 'kube-node-deleted',
    expected: 'removed',
    reason: 'LEADER_GONE',
    // A grace window far longer than the case: only the Node evidence can end the wait.
    policy: { ...KUBE_ONLY, graceMs: 600_000 },
    async arrange(world) {
      const leader = await world.lab.leader();
      // The Node object goes with its machine; the etcd pod object outlives it (before PodGC), and no path reaches the member.
      world.fake.deleteNode(leader.name);
      await world.lab.fault(leader.name, 'cut');
      return leader;
    },
    async verify(seen) {
      const { world, pipeline, target: leader, outcome, deciding } = seen;
      return [
        ...says('approval', deciding.message, [
          leader.name,
          `its Node ${leader.name} no longer exists`,
          `port-forward ${podOf(leader)}:2379`,
          `pods "${leader.name}" not found`,
        ]),
        ...check(
          typeof deciding.evidence.targetGone === 'string' && deciding.evidence.targetGone.includes(leader.name),
          `evidence.targetGone ${JSON.stringify(deciding.evidence.targetGone)}`,
        ),
        ...check(pipeline.calls.moveLeader.length === 0, `MoveLeader sent to a leader no path reaches: ${pipeline.calls.moveLeader.join(',')}`),
        ...removedWithNewLeader(outcome, leader, 'skipped'),
        ...(await membershipIs(world.lab, [leader])),
        ...(await machineReplaced(seen)),
      ];
    },
  }),
  onKubeWorld({
    name: 'kube-api-unreachable',
    expected: 'removed',
    // The kube paths are lost, etcd is not: the sick leader is moved over the direct path as it would be without Kubernetes.
    reason: 'LEADER_MOVED',
    workloadUnreachable: true,
    arrange: (world) => world.lab.leader(),
    async verify(seen) {
      const { world, pipeline, target: leader, outcome, deciding, unreachableApi = '?' } = seen;
      const moved = leaderMoved(pipeline);
      const views = viewsOf(pipeline);
      const kubePaths = views.flatMap((v) => v.members.flatMap((m) => m.paths.filter((p) => p.path !== 'direct').map((p) => `${m.name} ${p.path}`)));
      return [
        ...says('approval', deciding.message, [leader.name, `over direct ${leader.clientUrl}`]),
        // Every probe says why the kube paths were left out, naming the API server it could not reach, and tried none of them.
        ...check(views.length > 0, 'no MembersProbed'),
        ...says('view.pathLookFailure', views[0]?.pathLookFailure ?? '', [
          'the workload cluster did not answer, so only the direct path is probed',
          `ECONNREFUSED ${hostOf(unreachableApi)}`,
        ]),
        ...check(
          views.every((v) => v.pathLookFailure === views[0]?.pathLookFailure),
          `a later probe said otherwise: ${JSON.stringify(views.map((v) => v.pathLookFailure ?? null))}`,
        ),
        // The decision itself says so too, not only the probes.
        ...check(
          deciding.evidence.pathLookFailure === views[0]?.pathLookFailure,
          `approval evidence.pathLookFailure ${JSON.stringify(deciding.evidence.pathLookFailure)}`,
        ),
        ...check(kubePaths.length === 0, `kube paths probed with the workload API server down: ${kubePaths.join(', ')}`),
        ...check(moved?.from === leader.id && moved.path === 'direct', `LeaderMoved ${JSON.stringify(moved)}`),
        ...removedWithNewLeader(outcome, leader, 'moved'),
        ...(await membershipIs(world.lab, [leader])),
        // The Machines live in the management cluster, which still answers.
        ...(await machineReplaced(seen)),
      ];
    },
  }),
];
