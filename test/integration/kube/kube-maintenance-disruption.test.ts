// Another disruption holds a removal and a maintenance step, on real etcd reached through the FAKE
// API server alone (no client URL: every member found, probed, defragmented, disarmed and removed
// through its etcd pod), a member's Node cordoned as a drain begins:
// - 3 members, a follower's kubelet down (its etcd serves): removing it would leave 2 of 2, no
//   margin with the cordoned one down, so it waits (DISRUPTION_IN_PROGRESS) naming the Node;
//   uncordoned, it is removed.
// - 5 members at their quota (NOSPACE on every member), a follower dead: defragmenting any live
//   member would leave 2 of 5 answering with the cordoned one down, so the dead follower's removal
//   waits naming the Node and nothing is defragmented; uncordoned, the maintenance clears the alarm
//   one member at a time and the follower is removed.
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { alarmsOf, fillAndCompact, QUOTA_ARGS } from '../../support/fragmented-lab.ts';
import { KUBE_CALL_TIMEOUT_MS, startPipeline, type Pipeline } from '../e2e/pipeline.ts';
import { startKubeWorld, type KubeWorld } from './kube-world.ts';
import { kubeWorldPerDescribe } from './world-per-describe.ts';

const NODES = resourceType('', 'nodes')!;
const MEMBERS = 5;

/** As kubectl cordon writes it; every drain, Cluster API's included, begins with one. */
const cordon = (world: KubeWorld, node: string, on: boolean): void => {
  const found = world.fake.store.get(NODES, '', node);
  world.fake.store.put(NODES, { ...found, spec: { ...(found.spec as object), unschedulable: on } });
};

const retriesWith = (pipeline: Pipeline, reason: string) =>
  pipeline.events.find((e): e is EventEnvelope<'RetryRequested'> => e.detailType === 'RetryRequested' && e.detail.reason === reason);

describe('a cordoned Node holds a removal that would leave no margin', () => {
  const current = kubeWorldPerDescribe<Pipeline>(() => startKubeWorld(3));

  it("a follower whose kubelet is down waits while another member's Node is cordoned, naming it; uncordoned, it is removed", async () => {
    const world = current.world!;
    const leader = await world.lab.waitForLeader();
    const [target, other] = world.lab.members.filter((m) => m.id !== leader.id);
    world.fake.kubeletDown(target!.name);
    cordon(world, other!.name, true);
    const pipeline = (current.pipeline = await startPipeline(world.lab, {
      kube: world.access,
      endpoints: [],
      policy: { maxAttempts: 60, incidentDeadlineMs: 300_000, callTimeoutMs: KUBE_CALL_TIMEOUT_MS },
    }));
    const outcome = pipeline.remediate({ machineName: world.machineOf(target!) }, 120_000);
    outcome.catch(() => undefined);

    const held = await waitFor(async () => retriesWith(pipeline, 'DISRUPTION_IN_PROGRESS'), { timeoutMs: 60_000, what: 'the removal to wait on the cordon' });
    expect(held.detail.message).toContain(`its Node ${other!.name} is cordoned (a drain stops its pods)`);
    expect(held.detail.message).toMatch(/nothing is removed until it ends/);
    expect(pipeline.calls.memberRemove).toEqual([]);

    cordon(world, other!.name, false);
    const ended = await outcome;
    expect(ended.detailType, JSON.stringify(ended.detail).slice(0, 1_500)).toBe('RemediationCompleted');
    expect(pipeline.calls.removed).toEqual([target!.id]);
  }, 180_000);
});

describe('a cordoned Node holds the maintenance a removal waits on', () => {
  const current = kubeWorldPerDescribe<Pipeline>(() => startKubeWorld(MEMBERS, { tls: false, memberArgs: QUOTA_ARGS(MEMBERS, 'cp-') }));

  it('the removal waits naming the Node and nothing is defragmented; uncordoned, NOSPACE is cleared and the follower removed', async () => {
    const world = current.world!;
    const { lab } = world;
    const leader = await lab.waitForLeader();
    await fillAndCompact(lab);
    const [dead, cordoned] = lab.members.filter((m) => m.id !== leader.id);
    await lab.kill(dead!.name);
    cordon(world, cordoned!.name, true);

    // No client URL: the members are found, probed and maintained through their etcd pods.
    const pipeline = (current.pipeline = await startPipeline(lab, {
      kube: world.access,
      endpoints: [],
      policy: { maxAttempts: 60, incidentDeadlineMs: 300_000, callTimeoutMs: KUBE_CALL_TIMEOUT_MS },
    }));
    let defragmented = 0;
    pipeline.calls.around = {
      defragment: async (_endpoint, send) => {
        defragmented += 1;
        await send();
      },
    };
    const outcome = pipeline.remediate({ machineName: world.machineOf(dead!) }, 240_000);
    outcome.catch(() => undefined);

    const held = await waitFor(
      async () =>
        pipeline.events.find((e): e is EventEnvelope<'RetryRequested'> => e.detailType === 'RetryRequested' && e.detail.reason === 'DISRUPTION_IN_PROGRESS'),
      { timeoutMs: 90_000, what: 'the removal to wait on the cordoned Node' },
    );
    const { message } = held.detail;
    expect(message).toContain('NOSPACE alarm');
    expect(message).toContain('maintenance clears it once another disruption ends');
    expect(message).toContain(`its Node ${cordoned!.name} is cordoned`);
    expect(message).not.toMatch(/disaster|snapshot restore/);
    expect(defragmented).toBe(0);
    expect(pipeline.calls.memberRemove).toEqual([]);

    cordon(world, cordoned!.name, false);
    const ended = await outcome;
    expect(ended.detailType, JSON.stringify(ended.detail).slice(0, 1_500)).toBe('RemediationCompleted');
    expect(pipeline.calls.removed).toEqual([dead!.id]);
    const done = pipeline.events.find((e): e is EventEnvelope<'MaintenanceEnded'> => e.detailType === 'MaintenanceEnded' && e.detail.outcome === 'done');
    expect(done, 'the maintenance ended done').toBeDefined();
    // Each live member once, and nothing before the Node was uncordoned (above).
    const steps = (done!.detail.evidence.steps as { key: string; outcome: string }[]).filter((s) => s.outcome === 'done' && s.key.startsWith('defragment:'));
    expect(steps.map((s) => s.key).sort()).toEqual(
      lab.members
        .filter((m) => m.id !== dead!.id)
        .map((m) => `defragment:${m.id}`)
        .sort(),
    );
    expect(defragmented).toBeGreaterThanOrEqual(MEMBERS - 1);
    expect(await alarmsOf(lab.members.filter((m) => m.id !== dead!.id))).toEqual([]);
  }, 300_000);
});
