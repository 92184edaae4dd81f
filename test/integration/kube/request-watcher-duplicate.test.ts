// A request's phase says what happened to its Machine. A request for a member another incident
// already holds joins that incident (no incident of its own, no phase flip) and follows it to its
// end; a member another remediator (of another state) removed still gets its Machine replaced, by
// the request's own incident. Real etcd behind the FAKE API server; the leader's client paths are
// cut (peers still reach it, so the followers keep naming it leader), and the runtime waits out a
// long grace window on it.
import { describe, expect, it, type TestContext } from 'vitest';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startRequestWatcher, type RequestWatcher } from '../../../infra/kubernetes/request-watcher.ts';
import { startPipeline, type Pipeline } from '../e2e/pipeline.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, worldEtcdTls, type KubeWorld } from './kube-world.ts';
import { lanesOf } from './lanes.ts';
import { MHC_REASON, recordPhases, requestsIn, type StatusSeen } from './remediation-requests.ts';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

// Each case has a world of its own (the second removes a member), both booted before the first
// starts, so the second's has served etcd's post-start refusal of reconfiguration by the time it
// removes a member. The second starts once the first's incident waits out its grace window: what
// is left of the first is the request following that incident, then its recovery, little load
// beside the second's looks (lanes.ts). A case's timeout counts its wait for its turn.
const worlds = lanesOf({
  cases: 2,
  lanes: 2,
  ahead: 0,
  beginNow: true,
  afterBoots: true,
  start: () => startKubeWorld(),
  stop: (world: KubeWorld) => world.down(),
});

interface World {
  world: KubeWorld;
  /** The case is past its first steps: the next may start beside it. */
  settled: () => void;
  pipeline: Pipeline;
  leader: { id: string; name: string };
  machine: string;
  /** The request's phases as the API server stored them, in order, repeats dropped. */
  phases: string[];
  create(): Promise<void>;
  statusWith(wanted: (s: StatusSeen) => boolean, what: string, timeoutMs?: number): Promise<StatusSeen>;
}

/** The leader's client paths cut and a grace window far longer than the test: its incidents wait. */
async function setUp(test: TestContext): Promise<World> {
  const { world, settled } = await worlds.take(test);
  const pipeline = await startPipeline(world.lab, {
    kube: world.access,
    endpoints: [],
    policy: { pathOrder: ['port-forward'], graceMs: 600_000 },
    clusterId: CAPI_CLUSTER,
  });
  test.onTestFinished(() => pipeline.close());
  const leader = await world.lab.leader();
  await world.lab.fault(leader.name, 'cut');
  const machine = world.machineOf(leader);
  const { phases, stop } = recordPhases(world.fake.store, machine);
  test.onTestFinished(async () => stop());
  const runtime = pipeline.runtime;
  const watcher: RequestWatcher = startRequestWatcher({
    management: world.fake.kubeConfig(),
    runtime: {
      ...runtime,
      clock: systemClock,
      submit: (detail, source) => runtime.submit(detail, source),
      subscribe: (observer) => runtime.bus.subscribe(observer),
    },
    followIntervalMs: 200,
    clusterIdOf: (request) => request.clusterName ?? '',
    log: silent,
    restartDelayMs: 50,
  });
  test.onTestFinished(() => watcher.stop());
  await watcher.ready;
  const requests = requestsIn(world.fake.kubeConfig(), CAPI_NAMESPACE);
  return {
    world,
    settled,
    pipeline,
    leader,
    machine,
    phases,
    create: () => requests.create(machine, CAPI_CLUSTER, { reason: MHC_REASON }),
    statusWith: (wanted, what, timeoutMs = 30_000) => requests.statusWith(machine, wanted, what, { timeoutMs }),
  };
}

describe.concurrent('a request whose member another incident or remediator holds', { timeout: 180_000 }, () => {
  it('joins the open incident that holds its member: no incident of its own, no phase flip; it follows that incident, named, to its end', async (test) => {
    const t = await setUp(test);
    // Another source reports the same member by its Node: that incident waits out the grace window.
    const now = new Date().toISOString();
    await t.pipeline.runtime.submit({
      clusterId: CAPI_CLUSTER,
      target: { nodeName: t.leader.name },
      reason: 'Node not Ready',
      source: 'ec2',
      observedAt: now,
      at: now,
    });
    const holder = await waitFor(
      async () => {
        const [open] = await t.pipeline.runtime.store.listIncidents({ clusterId: CAPI_CLUSTER, state: 'open' });
        return open?.lastDecision?.reason === 'LEADER_UNREACHABLE' ? open : undefined;
        // Unconfirmed looks back off (one election timeout, doubling): on a busy machine a few of them
        // may pass before the followers confirm the leader gone.
      },
      { timeoutMs: 60_000, what: 'the first incident to wait out the grace window' },
    );
    t.settled();

    await t.create();
    const following = await t.statusWith((s) => s.incidentId === holder.incidentId, 'the request to follow the incident that holds its member');
    expect(following.phase).toBe('Waiting');
    expect(following.reasonCode).toBe('LEADER_UNREACHABLE');
    // The status can come first: submit only publishes the report, and the watcher, once it has
    // reported, finds the holder in the store (it names the same member) and follows it at once,
    // while the report's own probe-members, which journals the join, may not have run yet.
    const joined = await waitFor(
      async () => ((await t.pipeline.runtime.store.journal(holder.incidentId)).some((e) => e.step === 'duplicate-joined') ? true : undefined),
      { timeoutMs: 10_000, what: 'the holder’s journal to record the request’s report as a duplicate-joined' },
    );
    expect(joined).toBe(true);

    await t.world.lab.fault(t.leader.name, 'heal');
    const ended = await t.statusWith((s) => s.phase === 'Recovered', 'the request to end with the incident it follows', 45_000);
    expect(ended.incidentId).toBe(holder.incidentId);
    const incidents = await t.pipeline.runtime.store.listIncidents({ clusterId: CAPI_CLUSTER });
    expect(incidents.map((i) => i.incidentId)).toEqual([holder.incidentId]);
    // Never Completed (nothing happened to the Machine), and no phase before the end is an ending.
    expect(t.phases).not.toContain('Completed');
    expect(t.phases.filter((p) => ['Completed', 'Recovered', 'Cancelled', 'Blocked', 'Failed'].includes(p))).toEqual(['Recovered']);
    expect(t.pipeline.calls.memberRemove).toEqual([]);
  });

  it('a member another remediator (of another state) removed: the request’s incident replaces the Machine itself, once, and ends Completed', async (test) => {
    const t = await setUp(test);
    await t.create();
    const waiting = await t.statusWith((s) => s.reasonCode === 'LEADER_UNREACHABLE', 'the request’s incident to wait out the grace window');
    t.settled();

    // Another remediator with a state of its own removes the member (without a move: it is cut).
    const other = await startPipeline(t.world.lab, { policy: { graceMs: 1_000 }, ...worldEtcdTls(t.world) });
    test.onTestFinished(() => other.close());
    const removed = await other.remediate(t.leader.name, 60_000);
    expect(removed.detailType).toBe('RemediationCompleted');

    const done = await t.statusWith((s) => s.phase === 'AwaitingReplacement', 'the request to await its replacement', 45_000);
    expect(done.incidentId).toBe(waiting.incidentId);
    expect(done.reasonCode).toBe('MEMBER_ALREADY_REMOVED');
    expect((await t.world.readMachine(t.machine))?.deleting).toBe(true);
    expect(t.world.fake.requestCount('DELETE', `/machines/${t.machine}`)).toBe(1);
    // The approval says who removed the member, and when.
    const approval = t.pipeline.events.find((e) => e.detailType === 'RemediationApproved');
    expect((approval?.detail as { message?: string } | undefined)?.message).toContain(`incident ${removed.detail.incidentId}`);
    expect(t.pipeline.calls.memberRemove).toEqual([]);
    expect(other.calls.removed).toEqual([t.leader.id]);
    expect(t.phases).not.toContain('Recovered');
    expect(await t.pipeline.runtime.store.getIncident(waiting.incidentId!)).toMatchObject({ state: 'awaiting-replacement' });
  });
});
