// The exec relay goes through any healthy etcd pod: with the kubelets of two of three nodes down
// and every etcd serving, both sick members answer through the third node's pod; once its kubelet
// is down too, they are unreachable over exec-relay, and the failure names every relay tried. Real
// etcd behind the FAKE API server, whose exec runs the real etcdctl.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeEtcd } from '../../../functions/adapters/kube/kube-etcd.ts';
import { classifyFailure } from '../../../functions/core/common/classify.ts';
import type { MemberProbe, PathName, PathProbe, ProbeSample } from '../../../functions/core/common/types.ts';
import { startKubeWorld, worldEtcdTls, type KubeWorld } from './kube-world.ts';

// Roomy: the etcdctl runs of one probe share two busy cores with other tests.
const DEADLINE_MS = 4_000;
const SICK = ['cp-1', 'cp-2'];

let world: KubeWorld;
let kube: ReturnType<typeof createKubeEtcd>;

beforeAll(async () => {
  world = await startKubeWorld(3);
  // kubeadm without Cluster API: the operator's etcd client certificate, for the direct member list.
  kube = createKubeEtcd(
    { workloadKubeconfig: world.access.workloadKubeconfig },
    { guardPrefix: '/etcd-remediator', callTimeoutMs: DEADLINE_MS, ...worldEtcdTls(world) },
  );
});

afterAll(async () => {
  try {
    await kube?.close();
  } finally {
    await world?.down();
  }
});

// The member list comes over the direct path; each member's status only over the kube paths.
const probeWith = (etcd: ReturnType<typeof createKubeEtcd>, paths: PathName[] = ['port-forward', 'exec-relay']): Promise<ProbeSample> =>
  etcd.prober.probe({ seeds: world.lab.endpoints(), deadlineMs: DEADLINE_MS, paths });
const probe = (): Promise<ProbeSample> => probeWith(kube);

function memberOf(sample: ProbeSample, name: string): MemberProbe {
  const found = sample.members.find((m) => m.member.name === name);
  if (!found) throw new Error(`${name} is not in the sample: ${JSON.stringify(sample).slice(0, 1500)}`);
  return found;
}

function pathOf(probe: MemberProbe, path: PathName): PathProbe {
  const found = probe.paths.find((p) => p.path === path);
  if (!found) throw new Error(`${probe.member.name} was not probed over ${path}: ${JSON.stringify(probe.paths)}`);
  return found;
}

const clientUrlOf = (name: string): string => world.lab.members.find((m) => m.name === name)!.clientUrl;

describe.sequential('the exec relay through any healthy etcd pod', () => {
  it('reaches both members whose kubelets are down through the third pod, and says so', async () => {
    const leader = await world.lab.leader();
    for (const node of SICK) world.fake.kubeletDown(node);

    const sample = await probe();

    for (const name of SICK) {
      const sick = memberOf(sample, name);
      expect(pathOf(sick, 'port-forward')).toMatchObject({ reachability: 'refused' });
      // The endpoint names the relay that answered, not the first one tried.
      expect(pathOf(sick, 'exec-relay'), JSON.stringify(sick.paths)).toMatchObject({
        reachability: 'ok',
        endpoint: `${clientUrlOf(name)} via kube-system/etcd-cp-3`,
      });
      expect(sick.status?.leaderId).toBe(leader.id);
    }
  });

  it('with the third kubelet down too: unreachable over exec-relay, every relay named, the one that answered last tried first', async () => {
    world.fake.kubeletDown('cp-3');

    const sample = await probe();

    for (const name of SICK) {
      const relay = pathOf(memberOf(sample, name), 'exec-relay');
      expect(relay, JSON.stringify(relay)).toMatchObject({ reachability: 'refused', endpoint: `${clientUrlOf(name)} via kube-system/etcd-cp-3` });
      const message = relay.failure?.message ?? '';
      for (const pod of ['etcd-cp-1', 'etcd-cp-2', 'etcd-cp-3']) expect(message).toContain(`kube-system/${pod}`);
      expect(message).toContain('kubelet');
      // etcd-cp-3 answered in the last probe, so it leads the list of relays tried.
      expect(message.indexOf('kube-system/etcd-cp-3')).toBeLessThan(message.indexOf(`kube-system/etcd-${name === 'cp-1' ? 'cp-2' : 'cp-1'}`));
    }
  });

  it('an etcdctl the image does not have: every pod tried, the path and what to do said, not a dead path', async () => {
    for (const node of ['cp-1', 'cp-2', 'cp-3']) world.fake.heal(node);
    const missing = createKubeEtcd(
      { workloadKubeconfig: world.access.workloadKubeconfig, relayBinary: '/opt/etcd/bin/etcdctl' },
      { guardPrefix: '/etcd-remediator', callTimeoutMs: DEADLINE_MS, ...worldEtcdTls(world) },
    );
    try {
      const sample = await probeWith(missing, ['exec-relay']);
      for (const { name } of world.lab.members) {
        const relay = pathOf(memberOf(sample, name), 'exec-relay');
        expect(relay, JSON.stringify(relay)).toMatchObject({ reachability: 'other' });
        const failure = relay.failure!;
        expect(failure.message).toContain("/opt/etcd/bin/etcdctl is not in the container's image");
        expect(failure.message).toContain('set --relay-binary (relayBinary in a run config or registration) to the etcdctl this image has');
        for (const pod of ['etcd-cp-1', 'etcd-cp-2', 'etcd-cp-3']) expect(failure.message).toContain(`kube-system/${pod}`);
        expect(classifyFailure(failure).reason).toBe('RELAY_BINARY_MISSING');
      }
    } finally {
      await missing.close();
    }
  });

  it('relayBinary names the etcdctl the relay runs', async () => {
    // The fake's pods have etcdctl on their PATH too: a bare name reaches it.
    const onPath = createKubeEtcd(
      { workloadKubeconfig: world.access.workloadKubeconfig, relayBinary: 'etcdctl' },
      { guardPrefix: '/etcd-remediator', callTimeoutMs: DEADLINE_MS, ...worldEtcdTls(world) },
    );
    try {
      const sample = await probeWith(onPath, ['exec-relay']);
      for (const { name } of world.lab.members) expect(pathOf(memberOf(sample, name), 'exec-relay')).toMatchObject({ reachability: 'ok' });
    } finally {
      await onPath.close();
    }
  });
});
