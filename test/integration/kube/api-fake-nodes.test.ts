// Nodes in the kube fake as a kubelet posts them and the node lifecycle controller ages them: Ready
// True with heartbeat times while the kubelet runs; once it stops, after the grace period, every
// kubelet condition Unknown ("Kubelet stopped posting node status.") and the unreachable taints;
// back to Ready True, untainted, when it posts again. Watches see each change.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreV1Api, Watch, type V1Node, type V1NodeCondition } from '@kubernetes/client-node';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

const GRACE_MS = 200;

let fake: KubeApiFake;
let core: CoreV1Api;

beforeEach(async () => {
  fake = await startKubeApiFake({ nodeMonitorGracePeriodMs: GRACE_MS });
  fake.addControlPlaneNode({ name: 'cp-1', internalIp: '10.0.0.11' });
  fake.addControlPlaneNode({ name: 'cp-2', internalIp: '10.0.0.12' });
  core = fake.kubeConfig().makeApiClient(CoreV1Api);
});

afterEach(async () => {
  await fake.stop();
});

const conditionsOf = (node: V1Node): Record<string, V1NodeCondition> => Object.fromEntries((node.status?.conditions ?? []).map((c) => [c.type, c]));
const readyOf = async (name: string) => conditionsOf(await core.readNode({ name })).Ready;

describe('kube API fake: node conditions', () => {
  it('a Node carries the kubelet conditions, Ready True with heartbeat times', async () => {
    const node = await core.readNode({ name: 'cp-1' });
    const conditions = conditionsOf(node);
    expect(Object.keys(conditions).sort()).toEqual(['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready']);
    expect(conditions.Ready).toMatchObject({ status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' });
    expect(conditions.MemoryPressure).toMatchObject({
      status: 'False',
      reason: 'KubeletHasSufficientMemory',
      message: 'kubelet has sufficient memory available',
    });
    expect(conditions.DiskPressure).toMatchObject({ status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' });
    expect(conditions.PIDPressure).toMatchObject({ status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' });
    for (const condition of Object.values(conditions)) {
      expect(condition.lastHeartbeatTime).toBeInstanceOf(Date);
      expect(condition.lastTransitionTime).toBeInstanceOf(Date);
    }
    expect(node.spec?.taints).toBeUndefined();
  });

  it('a stopped kubelet: Ready goes Unknown after the grace period, tainted unreachable; heal posts Ready True again', async () => {
    const before = conditionsOf(await core.readNode({ name: 'cp-1' }));
    const seen: { type: string; ready: string | undefined; taints: number }[] = [];
    const list = await core.listNode();
    const watch = await new Watch(fake.kubeConfig()).watch(
      '/api/v1/nodes',
      { resourceVersion: list.metadata?.resourceVersion, fieldSelector: 'metadata.name=cp-1' },
      (type: string, node: V1Node) => seen.push({ type, ready: conditionsOf(node).Ready?.status, taints: node.spec?.taints?.length ?? 0 }),
      () => undefined,
    );
    try {
      const downAt = Date.now();
      fake.kubeletDown('cp-1');
      expect((await readyOf('cp-1'))?.status).toBe('True'); // the grace period has not run out yet
      await waitFor(async () => ((await readyOf('cp-1'))?.status === 'Unknown' ? true : undefined), { timeoutMs: 5_000, what: 'cp-1 Ready to go Unknown' });
      expect(Date.now() - downAt).toBeGreaterThanOrEqual(GRACE_MS);
      const node = await core.readNode({ name: 'cp-1' });
      const after = conditionsOf(node);
      for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
        expect(after[type]).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
        // The last heartbeat stays the kubelet's; the transition is the controller's, now.
        expect(after[type]!.lastHeartbeatTime).toEqual(before[type]!.lastHeartbeatTime);
        expect(after[type]!.lastTransitionTime!.getTime()).toBeGreaterThanOrEqual(downAt - 1_000);
      }
      expect(node.spec?.taints?.map((t) => [t.key, t.effect, t.timeAdded instanceof Date])).toEqual([
        ['node.kubernetes.io/unreachable', 'NoSchedule', true],
        ['node.kubernetes.io/unreachable', 'NoExecute', true],
      ]);
      expect(conditionsOf(await core.readNode({ name: 'cp-2' })).Ready?.status).toBe('True');

      fake.heal('cp-1');
      const healed = await core.readNode({ name: 'cp-1' });
      expect(conditionsOf(healed).Ready).toMatchObject({ status: 'True', reason: 'KubeletReady' });
      expect(healed.spec?.taints ?? []).toEqual([]);
      await waitFor(async () => (seen.length >= 2 ? true : undefined), { timeoutMs: 5_000, what: 'the watch to see both changes' });
      expect(seen).toEqual([
        { type: 'MODIFIED', ready: 'Unknown', taints: 2 },
        { type: 'MODIFIED', ready: 'True', taints: 0 },
      ]);
    } finally {
      watch.abort();
    }
  });

  it('healed inside the grace period, the Node never goes Unknown', async () => {
    fake.kubeletDown('cp-2');
    fake.heal('cp-2');
    const rv = (await core.readNode({ name: 'cp-2' })).metadata?.resourceVersion;
    // A later change on another node, past the grace period, proves time has passed.
    fake.kubeletDown('cp-1');
    await waitFor(async () => ((await readyOf('cp-1'))?.status === 'Unknown' ? true : undefined), { timeoutMs: 5_000, what: 'cp-1 Ready to go Unknown' });
    const node = await core.readNode({ name: 'cp-2' });
    expect([conditionsOf(node).Ready?.status, node.metadata?.resourceVersion]).toEqual(['True', rv]);
  });
});
