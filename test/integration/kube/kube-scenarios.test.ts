// Where KCP blocks, through the four handlers and the embedded runtime: a real etcd lab behind the
// FAKE Kubernetes API server, reached only the way Cluster API reaches it (port-forward through
// the workload API server) plus the exec relay, never directly. Each scenario asserts the reason,
// a message naming the failed path, quorum held, one member removal and the Machine deleted once.
import { describe, expect, it, type TestContext } from 'vitest';
import { isTerminalEvent, type EventEnvelope } from '../../../events/catalogue.ts';
import { createEtcd3Transport } from '../../../functions/adapters/etcd/index.ts';
import { REMEDIATED_ANNOTATION } from '../../../functions/adapters/kube/cluster-api/machine-actuator.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import type { LabMember } from '../../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../../infra/runtime/runtime.ts';
import { KUBE_CALL_TIMEOUT_MS, startPipeline, type Pipeline } from '../e2e/pipeline.ts';
import { startKubeWorld, worldEtcdTls, type KubeWorld } from './kube-world.ts';
import { lanesOf } from './lanes.ts';

// Every look (the plan's, and remediate's before and after its snapshot) goes through the relays,
// an etcdctl started in a pod: the kube pipelines' call deadline (KUBE_CALL_TIMEOUT_MS says why).
const KUBE_ONLY = { pathOrder: ['port-forward', 'exec-relay'], callTimeoutMs: KUBE_CALL_TIMEOUT_MS } as const;

// Every case removes a member, so each has a world of its own, booted ahead. Most of a case is
// waiting (on etcd's post-start refusal of reconfiguration, the backoffs, the new leader's
// election): a case starts beside another once that one's plan is made (its looks over the relays,
// whose deadlines a loaded machine threatens, are behind it), two at most, and no world boots
// beside a case's first steps (lanes.ts). A case's timeout counts its wait for its turn.
const worlds = lanesOf({ cases: 7, lanes: 2, ahead: 2, beginNow: true, start: () => startKubeWorld(), stop: (world: KubeWorld) => world.down() });

async function setUp(test: TestContext, policy: Record<string, unknown> = KUBE_ONLY): Promise<{ world: KubeWorld; pipeline: Pipeline }> {
  const { world, settled } = await worlds.take(test);
  // No client URL is configured: the members are found through their etcd pods.
  const pipeline = await startPipeline(world.lab, { kube: world.access, endpoints: [], policy });
  test.onTestFinished(() => pipeline.close());
  // Approved (or ended): the plan is made, and what is left is the removal and its aftermath.
  pipeline.runtime.bus.subscribe((event) => {
    if (event.detailType === 'RemediationApproved' || isTerminalEvent(event)) settled();
  });
  return { world, pipeline };
}

const messagesOf = (events: EventEnvelope[]): string[] => events.map((e) => (e.detail as { message?: string }).message ?? '');

function approval(pipeline: Pipeline): { reason: string; message: string } {
  const approved = pipeline.events.find((e) => e.detailType === 'RemediationApproved');
  const detail = (approved?.detail ?? {}) as { reason?: string; message?: string };
  if (process.env.SHOW_MESSAGES) console.log(detail.reason, detail.message);
  return { reason: detail.reason ?? '', message: detail.message ?? '' };
}

/** Quorum held: the members left elect a leader, and exactly the target went, once. */
async function expectReplaced(world: KubeWorld, pipeline: Pipeline, outcome: TerminalEvent, target: LabMember): Promise<void> {
  expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 2000)).toBe('RemediationCompleted');
  expect(pipeline.calls.removed).toEqual([target.id]);
  const left = await world.lab.memberList();
  expect(left.map((m) => m.id).sort()).toEqual(
    world.lab.members
      .filter((m) => m.id !== target.id)
      .map((m) => m.id)
      .sort(),
  );
  await world.lab.waitForLeader({ excluding: [target.name], timeoutMs: 10_000 });
  // The Machine was annotated with the record, then deleted (CAPI keeps it deleting while it drains).
  const machine = await world.readMachine(world.machineOf(target));
  expect(machine?.deleting).toBe(true);
  expect(JSON.parse(machine?.annotations[REMEDIATED_ANNOTATION] ?? '{}')).toMatchObject({ member: target.name, incidentId: outcome.detail.incidentId });
  expect(world.fake.requestCount('DELETE', `/machines/${world.machineOf(target)}`)).toBe(1);
}

describe.concurrent('Cluster API cases KCP blocks on, on real etcd behind the fake API server', { timeout: 180_000 }, () => {
  it('1. kubelet down on the leader: port-forward fails, the exec relay moves leadership, the Machine is replaced', async (test) => {
    const { world, pipeline } = await setUp(test);
    const leader = await world.lab.waitForLeader();
    world.fake.kubeletDown(leader.name);

    const outcome = await pipeline.remediate({ machineName: world.machineOf(leader) });

    await expectReplaced(world, pipeline, outcome, leader);
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.leaderMove).toBe('moved');
    expect(pipeline.calls.moveLeader).toHaveLength(1);
    const { reason, message } = approval(pipeline);
    expect(reason).toBe('LEADER_MOVED');
    expect(message).toContain(`port-forward kube-system/etcd-${leader.name}:2379`);
    expect(message).toContain('error dialing backend');
    expect(message).toContain('kubelet');
    expect(message).toMatch(/over exec-relay \S+ via kube-system\/etcd-cp-\d/);
    expect(message).not.toContain(`via kube-system/etcd-${leader.name}`);
  });

  it('1c. kubelets of two of three nodes down, the leader among them: the third pod relays, leadership moves, then the removal', async (test) => {
    const { world, pipeline } = await setUp(test);
    const leader = await world.lab.waitForLeader();
    // The other sick node comes first by name among the leader's relays, so the first relay tried fails.
    const [sick, healthy] = world.lab.members.filter((m) => m.id !== leader.id) as [LabMember, LabMember];
    for (const node of [leader.name, sick.name]) world.fake.kubeletDown(node);

    const outcome = await pipeline.remediate({ machineName: world.machineOf(leader) });

    await expectReplaced(world, pipeline, outcome, leader);
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.leaderMove).toBe('moved');
    expect(pipeline.calls.moveLeader).toHaveLength(1);
    const types = pipeline.events.map((e) => e.detailType);
    expect(types.indexOf('LeaderMoved')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('LeaderMoved')).toBeLessThan(types.indexOf('RemediationApproved'));
    const { reason, message } = approval(pipeline);
    expect(reason).toBe('LEADER_MOVED');
    expect(message).toContain(`over exec-relay ${leader.clientUrl} via kube-system/etcd-${healthy.name}`);
  });

  it('1b. the same with the relay disabled by policy: grace, then removal without a move', async (test) => {
    const { world, pipeline } = await setUp(test, { pathOrder: ['port-forward'], graceMs: 2_000 });
    const leader = await world.lab.waitForLeader();
    world.fake.kubeletDown(leader.name);

    const outcome = await pipeline.remediate({ machineName: world.machineOf(leader) });

    await expectReplaced(world, pipeline, outcome, leader);
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.leaderMove).toBe('skipped');
    expect(pipeline.calls.moveLeader).toEqual([]);
    expect(approval(pipeline).reason).toBe('LEADER_UNREACHABLE_PAST_GRACE');
    const waited = messagesOf(pipeline.events.filter((e) => e.detailType === 'RetryRequested'));
    expect(waited.some((m) => m.includes(`port-forward kube-system/etcd-${leader.name}:2379`) && m.includes('kubelet'))).toBe(true);
  });

  it('2. the leader’s Node object deleted (its machine went with it): LEADER_GONE without waiting out the grace window', async (test) => {
    // A grace window far longer than the test: only the Node evidence can end the wait.
    const { world, pipeline } = await setUp(test, { ...KUBE_ONLY, graceMs: 600_000 });
    const leader = await world.lab.waitForLeader();
    world.fake.deleteNode(leader.name);
    await world.lab.fault(leader.name, 'cut');

    const outcome = await pipeline.remediate({ nodeName: leader.name });

    await expectReplaced(world, pipeline, outcome, leader);
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.leaderMove).toBe('skipped');
    const { reason, message } = approval(pipeline);
    expect(reason).toBe('LEADER_GONE');
    expect(message).toContain(`its Node ${leader.name} no longer exists`);
    expect(message).toContain(`pods "${leader.name}" not found`);
  });

  it('3. containerd down on the leader: as 1, and the message is containerd’s', async (test) => {
    const { world, pipeline } = await setUp(test);
    const leader = await world.lab.waitForLeader();
    world.fake.containerdDown(leader.name);

    const outcome = await pipeline.remediate({ machineName: world.machineOf(leader) });

    await expectReplaced(world, pipeline, outcome, leader);
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.leaderMove).toBe('moved');
    const { reason, message } = approval(pipeline);
    expect(reason).toBe('LEADER_MOVED');
    expect(message).toContain('containerd.sock');
    expect(message).toMatch(/over exec-relay \S+ via kube-system\/etcd-cp-\d/);
  });

  it('5. a follower’s kubelet down: removed with no move needed', async (test) => {
    const { world, pipeline } = await setUp(test);
    const leader = await world.lab.waitForLeader();
    const follower = world.lab.members.find((m) => m.id !== leader.id)!;
    world.fake.kubeletDown(follower.name);

    const outcome = await pipeline.remediate({ machineName: world.machineOf(follower) });

    await expectReplaced(world, pipeline, outcome, follower);
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.leaderMove).toBe('not-needed');
    expect(pipeline.calls.moveLeader).toEqual([]);
    expect(approval(pipeline).reason).toBe('TARGET_IS_FOLLOWER');
    // The probe saw the failed path and said how.
    const probed = pipeline.events.find((e) => e.detailType === 'MembersProbed');
    const views = JSON.stringify(probed?.detail ?? {});
    expect(views).toContain(`port-forward to kube-system/etcd-${follower.name} failed: error dialing backend`);
  });

  it('6. a Machine whose member was already removed by hand goes straight to the actuator, as KCP does', async (test) => {
    const { world, pipeline } = await setUp(test);
    const leader = await world.lab.waitForLeader();
    const follower = world.lab.members.find((m) => m.id !== leader.id)!;
    // A person at a shell removed the member with etcdctl; its Machine is still there.
    const transport = createEtcd3Transport(worldEtcdTls(world));
    try {
      // etcd refuses reconfiguration for a few seconds after its members connect: ask until it accepts.
      const client = transport.client({ endpoint: leader.clientUrl, path: 'direct' });
      await waitFor(() => client.memberRemove(follower.id, 2_000), { timeoutMs: 20_000, intervalMs: 250, what: `etcd to accept removing ${follower.name}` });
    } finally {
      await transport.close();
    }

    const outcome = await pipeline.remediate({ machineName: world.machineOf(follower) });

    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 2000)).toBe('RemediationCompleted');
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(outcome.detail.leaderMove).toBe('not-needed');
    const { reason, message } = approval(pipeline);
    expect(reason).toBe('MEMBER_ALREADY_REMOVED');
    expect(message).toContain(`Machine ${world.machineOf(follower)} (node ${follower.name}) has no etcd member any more`);
    expect(pipeline.calls.memberRemove).toEqual([]);
    expect(pipeline.calls.moveLeader).toEqual([]);
    expect((await world.readMachine(world.machineOf(follower)))?.deleting).toBe(true);
    expect(world.fake.requestCount('DELETE', `/machines/${world.machineOf(follower)}`)).toBe(1);
    await world.lab.waitForLeader({ excluding: [follower.name], timeoutMs: 10_000 });
  });
});
