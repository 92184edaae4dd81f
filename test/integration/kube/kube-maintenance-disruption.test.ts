// Another disruption holds a maintenance step, on real etcd reached through the FAKE API server
// alone (no client URL: every member found, probed, defragmented and disarmed through its etcd
// pod): a 5-member control plane at its quota (NOSPACE on every member) with one follower dead and
// another member's Node cordoned, as a drain begins. Defragmenting any live member now would leave 2 of 5
// answering with the cordoned one down: the dead follower's removal waits (DISRUPTION_IN_PROGRESS),
// naming the Node, and nothing is defragmented. Uncordoned, the maintenance clears the alarm one
// member at a time and the follower is removed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { alarmsOf, fillAndCompact, QUOTA_ARGS } from '../../support/fragmented-lab.ts';
import { KUBE_CALL_TIMEOUT_MS, startPipeline, type Pipeline } from '../e2e/pipeline.ts';
import { startKubeWorld, type KubeWorld } from './kube-world.ts';

const NODES = resourceType('', 'nodes')!;
const MEMBERS = 5;

const current: { world?: KubeWorld; pipeline?: Pipeline } = {};

beforeAll(async () => {
  current.world = await startKubeWorld(MEMBERS, { tls: false, memberArgs: QUOTA_ARGS(MEMBERS, 'cp-') });
}, 60_000);

afterAll(async () => {
  try {
    await current.pipeline?.close();
  } finally {
    await current.world?.down();
  }
});

describe('a cordoned Node holds the maintenance a removal waits on', () => {
  it('the removal waits naming the Node and nothing is defragmented; uncordoned, NOSPACE is cleared and the follower removed', async () => {
    const world = current.world!;
    const { lab } = world;
    const leader = await lab.waitForLeader();
    await fillAndCompact(lab);
    const [dead, cordoned] = lab.members.filter((m) => m.id !== leader.id);
    await lab.kill(dead!.name);
    // As kubectl cordon writes it; every drain, Cluster API's included, begins with one.
    const setCordon = (on: boolean) => {
      const node = world.fake.store.get(NODES, '', cordoned!.name);
      world.fake.store.put(NODES, { ...node, spec: { ...(node.spec as object), unschedulable: on } });
    };
    setCordon(true);

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

    setCordon(false);
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
