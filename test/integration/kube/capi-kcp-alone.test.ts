// The seed problem as Cluster API meets it, in the simulation (test/support/capi-sim): the etcd
// leader's machine goes sick in each of the seed's three forms, MachineHealthCheck hands it to
// KubeadmControlPlane (no external template), and KCP cannot forward leadership, because it
// dials the leader through the leader's own node: OwnerRemediated False, CannotBeRemediated,
// "failed to move etcd leadership", round after round; the Machine is never deleted and the
// sick leader stays in etcd (kubernetes-sigs/cluster-api#8465, #12711). This test proves the
// simulation reproduces the real failure; the watcher's tests show it unblocked.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { MACHINES, conditionOf, isDeleting, nameOf } from '../../support/capi-sim/capi-objects.ts';
import { CAPI_NAMESPACE } from './kube-world.ts';
import { startCapiWorld, type CapiWorld } from './capi-world.ts';

let current: CapiWorld | undefined;
afterEach(async () => {
  await current?.down();
  current = undefined;
});

const FORMS = [
  { form: 'kubelet stopped', fault: (w: CapiWorld, node: string) => w.world.fake.kubeletDown(node), unhealthy: /Ready on Node is reporting status Unknown/ },
  { form: 'Node deleted', fault: (w: CapiWorld, node: string) => w.world.fake.deleteNode(node), unhealthy: /Node cp-\d has been deleted/ },
  {
    form: 'containerd down',
    fault: (w: CapiWorld, node: string) => w.world.fake.containerdDown(node),
    unhealthy: /Ready on Node is reporting status False with reason KubeletNotReady/,
  },
] as const;

describe.sequential('KubeadmControlPlane alone, the sick machine leading etcd', () => {
  for (const { form, fault, unhealthy } of FORMS) {
    it(`${form}: MHC marks it, KCP cannot forward leadership through its node, and nothing is deleted`, async () => {
      const w = (current = await startCapiWorld({ external: false }));
      const leader = await w.world.lab.leader();
      const machine = w.world.machineOf(leader);
      fault(w, leader.name);

      const refused = await waitFor(
        async () => {
          const found = w.world.fake.store.find(MACHINES, CAPI_NAMESPACE, machine);
          const owner = found && conditionOf(found, 'OwnerRemediated');
          return owner?.reason === 'CannotBeRemediated' ? { found: found!, owner } : undefined;
        },
        { timeoutMs: 20_000, what: `KCP to refuse remediating ${machine}` },
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${w.sim.describe()}`);
      });
      expect(conditionOf(refused.found, 'HealthCheckSucceeded')).toMatchObject({ status: 'False', message: expect.stringMatching(unhealthy) });
      expect(refused.owner.message).toBe('failed to move etcd leadership');
      // Every candidate was tried through the leader's node, and each failed there.
      expect(
        w.sim.timeline.filter(
          (e) => e.about === 'kcp' && /forward leadership to cp-\d failed: could not establish a connection to etcd members hosted on/.test(e.what),
        ).length,
      ).toBeGreaterThanOrEqual(2);

      // Rounds later it is still so: blocked, not slow.
      const rounds = w.sim.rounds;
      await waitFor(async () => (w.sim.rounds >= rounds + 20 ? true : undefined), { timeoutMs: 20_000, what: '20 more rounds' });
      const after = w.world.fake.store.find(MACHINES, CAPI_NAMESPACE, machine)!;
      expect(isDeleting(after)).toBe(false);
      expect(conditionOf(after, 'OwnerRemediated')?.reason).toBe('CannotBeRemediated');
      expect((await w.world.lab.memberList()).map((m) => m.id)).toContain(leader.id);
      expect((await w.world.lab.leader()).id).toBe(leader.id);
      expect(w.world.fake.store.list(MACHINES, CAPI_NAMESPACE, null)).toHaveLength(3);
    });
  }

  it('a sick follower (kubelet stopped): KCP remediates it alone, and the control plane is back to three', async () => {
    const w = (current = await startCapiWorld({ external: false }));
    const leader = await w.world.lab.leader();
    const follower = w.world.lab.members.find((m) => m.id !== leader.id)!;
    const machine = w.world.machineOf(follower);
    w.world.fake.kubeletDown(follower.name);

    const full = await waitFor(
      async () => {
        const machines = w.world.fake.store.list(MACHINES, CAPI_NAMESPACE, null);
        const members = await w.world.lab.memberList();
        return machines.length === 3 && !machines.some((m) => nameOf(m) === machine) && members.length === 3 && !members.some((m) => m.isLearner)
          ? members
          : undefined;
      },
      { timeoutMs: 60_000, what: 'the control plane back to three machines and members' },
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${w.sim.describe()}`);
    });
    expect(full.map((m) => m.id)).not.toContain(follower.id);
    const steps = w.sim.timeline.filter((e) => e.about === machine).map((e) => e.what);
    // In the order Cluster API takes them: deleted by KCP, drained (the unreachable Node's pods
    // skipped), KCP's hook removing the member, the Node, then the Machine gone.
    const order = [
      'kcp deleted the Machine to remediate it',
      'Deleting: WaitingForPreTerminateHook',
      `kcp removed etcd member ${follower.name}`,
      `Node ${follower.name} deleted`,
      'Machine gone',
    ];
    const at = order.map((step) => steps.findIndex((s) => s.startsWith(step)));
    expect(
      at.every((i) => i >= 0),
      `${order.join(' → ')}\n${w.sim.describe()}`,
    ).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(w.sim.timeline.some((e) => e.what === 'replacement joined')).toBe(true);
  });
});
