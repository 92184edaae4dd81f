// The exec relay asks the pods on Ready Nodes first: once a stopped kubelet's Node turns Ready
// Unknown (the node lifecycle controller's grace period, short here), no relay goes through its
// pod while another pod can carry it; before that, the order is by name. Real etcd behind the FAKE
// API server, whose Nodes carry the kubelet's conditions.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeEtcd } from '../../../functions/adapters/kube/kube-etcd.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import type { ProbeSample } from '../../../functions/core/common/types.ts';
import { startKubeWorld, worldEtcdTls, type KubeWorld } from './kube-world.ts';

const DEADLINE_MS = 4_000;
const EXEC_THROUGH_CP1 = '/api/v1/namespaces/kube-system/pods/etcd-cp-1/exec';

let world: KubeWorld;

beforeAll(async () => {
  world = await startKubeWorld(3);
  world.fake.nodeMonitorGracePeriodMs = 200;
});

afterAll(async () => world?.down());

/** A fresh access each time: no relay remembered from an earlier probe. */
async function probeOverRelay(): Promise<{ sample: ProbeSample; throughCp1: number }> {
  const kube = createKubeEtcd(
    { workloadKubeconfig: world.access.workloadKubeconfig },
    { guardPrefix: '/etcd-remediator', callTimeoutMs: DEADLINE_MS, ...worldEtcdTls(world) },
  );
  const before = world.fake.upgrades.length;
  try {
    const sample = await kube.prober.probe({ seeds: world.lab.endpoints(), deadlineMs: DEADLINE_MS, paths: ['exec-relay'] });
    // Each pod's own etcdctl also lists its own member (a seed): only relays for another member count.
    const own = `command=--endpoints=${world.lab.member('cp-1').clientUrl}&`;
    const relayed = world.fake.upgrades.slice(before).filter((u) => u.path === EXEC_THROUGH_CP1 && !decodeURIComponent(u.query).includes(own));
    return { sample, throughCp1: relayed.length };
  } finally {
    await kube.close();
  }
}

const readyOf = async (node: string): Promise<string | undefined> => {
  const core = world.fake.kubeConfig().makeApiClient(CoreV1Api);
  return (await core.readNode({ name: node })).status?.conditions?.find((c) => c.type === 'Ready')?.status;
};

describe.sequential('relay order by Node readiness', () => {
  it('with every Node Ready, tries the pods by name: etcd-cp-1 relays for the others', async () => {
    const { sample, throughCp1 } = await probeOverRelay();
    expect(sample.members.every((m) => m.paths.some((p) => p.path === 'exec-relay' && p.reachability === 'ok'))).toBe(true);
    expect(throughCp1).toBeGreaterThan(0);
  });

  it('once cp-1 turns Ready Unknown, relays go through the Ready pods and none through etcd-cp-1', async () => {
    world.fake.kubeletDown('cp-1');
    await waitFor(async () => ((await readyOf('cp-1')) === 'Unknown' ? true : undefined), { timeoutMs: 5_000, what: 'cp-1 Ready Unknown' });

    const { sample, throughCp1 } = await probeOverRelay();

    // cp-1's etcd still serves: the relay through another pod reaches it.
    const reached = sample.members.map((m) => [m.member.name, m.paths.find((p) => p.path === 'exec-relay')?.reachability]);
    expect(reached.sort()).toEqual([
      ['cp-1', 'ok'],
      ['cp-2', 'ok'],
      ['cp-3', 'ok'],
    ]);
    expect(throughCp1).toBe(0);
  });
});
