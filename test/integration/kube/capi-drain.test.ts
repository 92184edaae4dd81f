// The simulated Machine controller's drain against the Node states the seed's forms leave
// (machine_controller.go reconcileDelete, isNodeDrainAllowed, drainNode): a Node whose container
// runtime is down still posts (Ready False), its pods cannot stop, and drain waits for ever; the
// exclude-node-draining annotation or a nodeDrainTimeout lets the deletion through; an unreachable
// Node (Ready Unknown) ignores pods deleted over a second ago. No etcd: the deletion is the subject.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { EXCLUDE_NODE_DRAINING, MACHINES, MACHINE_FINALIZER, NODES, PODS, dressKubeadmNode, nodeCondition } from '../../support/capi-sim/capi-objects.ts';
import { kubeletRound, machineDeletionRound } from '../../support/capi-sim/machine-deletion.ts';
import { simContext, type TimelineEntry } from '../../support/capi-sim/sim-context.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import type { JsonObject } from '../../support/fakes/kube/patch.ts';

let fake: KubeApiFake;
let timer: NodeJS.Timeout;
let rounds = 0;
const timeline: TimelineEntry[] = [];

beforeEach(async () => {
  fake = await startKubeApiFake({ nodeMonitorGracePeriodMs: 200, runtimeDownNoticedMs: 50, machineDeletionMs: 600_000 });
  timeline.length = 0;
  const sim = simContext(fake, timeline);
  for (const [index, name] of ['cp-1', 'cp-2'].entries()) {
    fake.addControlPlaneNode({ name, internalIp: `10.0.0.${11 + index}`, machine: { name: `wl-${name}`, namespace: 'default', clusterName: 'wl' } });
    const machine = fake.store.get(MACHINES, 'default', `wl-${name}`);
    fake.store.put(MACHINES, { ...machine, metadata: { ...(machine.metadata as JsonObject), finalizers: [MACHINE_FINALIZER] } });
    dressKubeadmNode(fake, name);
  }
  timer = setInterval(() => {
    kubeletRound(sim);
    machineDeletionRound(sim);
    rounds += 1;
  }, 50);
});
afterEach(async () => {
  clearInterval(timer);
  await fake.stop();
});

const deleteMachine = (name: string, extra: { annotations?: Record<string, string>; spec?: JsonObject } = {}) => {
  const machine = fake.store.get(MACHINES, 'default', name);
  const metadata = machine.metadata as JsonObject;
  fake.store.put(MACHINES, {
    ...machine,
    metadata: {
      ...metadata,
      annotations: { ...(metadata.annotations as JsonObject | undefined), ...extra.annotations },
      deletionTimestamp: new Date().toISOString(),
    },
    spec: { ...(machine.spec as JsonObject), ...extra.spec },
  });
};
const gone = (name: string) => waitFor(async () => (fake.store.find(MACHINES, 'default', name) ? undefined : true), { timeoutMs: 5_000, what: `${name} gone` });
const notReady = (node: string, status: string) =>
  waitFor(async () => (nodeCondition(fake.store.get(NODES, '', node), 'Ready')?.status === status ? true : undefined), {
    timeoutMs: 5_000,
    what: `${node} Ready ${status}`,
  });

describe('the simulated drain', () => {
  it('containerd down: Ready False, the pod stays Terminating, and the deletion waits at drain, round after round', async () => {
    fake.containerdDown('cp-1');
    await notReady('cp-1', 'False');
    deleteMachine('wl-cp-1');
    await waitFor(async () => (timeline.some((e) => e.what.startsWith('Deleting: DrainingNode')) ? true : undefined), {
      timeoutMs: 5_000,
      what: 'drain to start',
    });
    // Blocked, not slow: twenty rounds later it is still there.
    const from = rounds;
    await waitFor(async () => (rounds >= from + 20 ? true : undefined), { timeoutMs: 5_000, what: '20 more rounds' });
    expect(fake.store.find(MACHINES, 'default', 'wl-cp-1')).toBeDefined();
    expect(fake.store.get(PODS, 'kube-system', 'coredns-cp-1').metadata).toHaveProperty('deletionTimestamp');
    expect(timeline.filter((e) => e.about === 'wl-cp-1').at(-1)?.what).toMatch(
      /^Deleting: DrainingNode .*kube-system\/coredns-cp-1 deletionTimestamp set, but still not removed from the Node/,
    );
  });

  it('containerd down with exclude-node-draining: no drain, the Node deleted, the Machine gone', async () => {
    fake.containerdDown('cp-1');
    await notReady('cp-1', 'False');
    deleteMachine('wl-cp-1', { annotations: { [EXCLUDE_NODE_DRAINING]: 'its Node is not Ready' } });
    await gone('wl-cp-1');
    expect(timeline.some((e) => e.what.startsWith('Deleting: DrainingNode'))).toBe(false);
    expect(fake.store.find(NODES, '', 'cp-1')).toBeUndefined();
  });

  it('containerd down with a nodeDrainTimeout: drain given up past it, the Machine gone', async () => {
    fake.containerdDown('cp-1');
    await notReady('cp-1', 'False');
    deleteMachine('wl-cp-1', { spec: { nodeDrainTimeout: '1s' } });
    await gone('wl-cp-1');
    expect(timeline.some((e) => e.what.startsWith('Deleting: DrainingNode'))).toBe(true);
  });

  it('kubelet stopped: Ready Unknown, pods deleted over a second ago ignored, the Machine gone; a healthy Node drains at once', async () => {
    fake.kubeletDown('cp-1');
    await notReady('cp-1', 'Unknown');
    deleteMachine('wl-cp-1');
    await gone('wl-cp-1');
    deleteMachine('wl-cp-2');
    // The last control-plane Machine keeps its Node (errLastControlPlaneNode), and still goes.
    await gone('wl-cp-2');
    expect(fake.store.find(NODES, '', 'cp-2')).toBeDefined();
  });
});
