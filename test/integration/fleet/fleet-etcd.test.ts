// The fleet's gates on real etcd, through the local runtime: three 3-member clusters remediated at
// once with maxRemovalsInFlight 1 never have two removals in flight, and all finish; a paused
// cluster's leader is neither moved nor removed while the plan says PAUSED, and resume (the real
// binary on the runtime's state file) lets it finish.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { parsePolicy, type PolicyInput } from '../../../functions/core/policy/policy.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import type { Actuator } from '../../../functions/ports/actuator.ts';
import type { ClusterEntry } from '../../../functions/ports/cluster-directory.ts';
import type { ClusterEtcd } from '../../../functions/ports/cluster-etcd.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { createLocalRuntime, type LocalRuntime, type TerminalEvent } from '../../../infra/runtime/runtime.ts';
import { labPolicy, recordingEtcd, type CallLog } from '../e2e/pipeline.ts';
import { runCli } from '../cli/support.ts';

/** No storm here: each test is about the cap or the pause alone. */
const fleetPolicy = (over: PolicyInput['fleet'] = {}): PolicyInput => ({ ...labPolicy, snapshotBeforeRemove: false, fleet: { stormMinClusters: 50, ...over } });

interface Fleet {
  labs: Lab[];
  runtime: LocalRuntime;
  events: EventEnvelope[];
  calls: CallLog;
  statePath: string;
  /** Clusters between their MemberRemove and the end of their actuator call. */
  inFlight: Set<string>;
  mostInFlight: number;
}

let fleet: Fleet | undefined;
let dir: string | undefined;
afterEach(async () => {
  const f = fleet;
  fleet = undefined;
  try {
    await f?.runtime.stop({ drainTimeoutMs: 5_000 });
  } finally {
    await Promise.all((f?.labs ?? []).map((l) => l.down()));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** The actuator's work takes a while, as a real replacement does: a removal stays in flight meanwhile. */
const ACTUATOR_MS = 400;

async function startFleet(clusters: number, policy: PolicyInput): Promise<Fleet> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-'));
  const labs = await Promise.all(Array.from({ length: clusters }, () => startLab({ members: 3 })));
  const calls: CallLog = { memberRemove: [], removed: [], removedAt: [], moveLeader: [] };
  const etcd = recordingEtcd(calls);
  const entries: ClusterEntry[] = labs.map((lab, i) => ({ clusterId: `c${i}`, endpoints: lab.endpoints(), policy: parsePolicy(policy) }));
  const byEndpoint = new Map(entries.flatMap((e) => e.endpoints.map((u) => [u, e.clusterId] as const)));
  const f: Partial<Fleet> & { inFlight: Set<string>; mostInFlight: number } = { inFlight: new Set(), mostInFlight: 0 };
  const etcdFor = (cluster: ClusterEntry): ClusterEtcd => {
    const real = etcd.etcdFor(cluster);
    return {
      ...real,
      transport: {
        close: () => real.transport.close(),
        client: (target) => {
          const c = real.transport.client(target);
          return {
            ...c,
            memberRemove: async (id, deadline) => {
              const clusterId = byEndpoint.get(target.endpoint) ?? cluster.clusterId;
              f.inFlight.add(clusterId);
              f.mostInFlight = Math.max(f.mostInFlight, f.inFlight.size);
              try {
                return await c.memberRemove(id, deadline);
              } catch (error) {
                // Refused (etcd 3.4's guard on a young cluster, say): nothing is in flight, the step ends.
                f.inFlight.delete(clusterId);
                throw error;
              }
            },
          };
        },
      },
    };
  };
  const actuator: Actuator = {
    name: 'slow-test-actuator',
    replace: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, ACTUATOR_MS));
      f.inFlight.delete(request.clusterId);
      return { action: 'none', detail: 'left as it is' };
    },
  };
  const statePath = path.join(dir, 'state.sqlite');
  const runtime = await createLocalRuntime({ statePath, directory: createStaticDirectory(entries), etcdFor, actuator, logLevel: 'SILENT' });
  const events: EventEnvelope[] = [];
  runtime.bus.subscribe((e) => events.push(e));
  await runtime.start();
  Object.assign(f, { labs, runtime, events, calls, statePath });
  return f as Fleet;
}

async function report(f: Fleet, clusterId: string, memberName: string): Promise<void> {
  const now = new Date().toISOString();
  await f.runtime.submit({ clusterId, target: { memberName }, reason: 'test', source: 'test', observedAt: now, at: now });
}

const endings = (f: Fleet): TerminalEvent[] =>
  f.events.filter((e): e is TerminalEvent => ['RemediationCompleted', 'RemediationBlocked', 'RemediationFailed', 'RemediationClosed'].includes(e.detailType));

describe.sequential('fleet gates on real etcd', () => {
  it('three clusters at once, maxRemovalsInFlight 1: one removal in flight at a time, and all finish', async () => {
    const f = (fleet = await startFleet(3, fleetPolicy({ maxRemovalsInFlight: 1 })));
    // A follower of each: removed without a move, so the removals would overlap but for the cap.
    const followers = await Promise.all(
      f.labs.map(async (lab) => {
        const leader = await lab.leader();
        return lab.members.find((m) => m.name !== leader.name)!.name;
      }),
    );
    await Promise.all(followers.map((name, i) => report(f, `c${i}`, name)));
    const done = await waitFor(async () => (endings(f).length >= 3 ? endings(f) : undefined), {
      timeoutMs: 90_000,
      what: 'an ending for each of the three clusters',
    });
    expect(done.map((e) => e.detailType)).toEqual(['RemediationCompleted', 'RemediationCompleted', 'RemediationCompleted']);
    expect(f.calls.removed).toHaveLength(3);
    expect(f.mostInFlight).toBe(1);
    // The cap was what held them: some waited for a slot.
    expect(f.events.some((e) => e.detailType === 'RetryRequested' && (e.detail as { reason: string }).reason === 'REMOVALS_IN_FLIGHT')).toBe(true);
    for (const lab of f.labs) expect(await lab.memberList()).toHaveLength(2);
  });

  it('a storm: three of three clusters fail at once, each removal is deferred with FLEET_STORM and nothing is removed; resume --storm lets all finish', async () => {
    // Threshold max(2 − 1, floor(0.2 × 3)) = 1: a second failing cluster makes a storm.
    const f = (fleet = await startFleet(3, {
      ...labPolicy,
      snapshotBeforeRemove: false,
      fleet: { stormMinClusters: 2, stormWindowMs: 60_000, stormCooldownMs: 60_000 },
    }));
    const followers = await Promise.all(
      f.labs.map(async (lab) => {
        const leader = await lab.leader();
        return lab.members.find((m) => m.name !== leader.name)!.name;
      }),
    );
    await Promise.all(followers.map((name, i) => report(f, `c${i}`, name)));
    const deferred = () =>
      new Set(
        f.events.filter((e) => e.detailType === 'RetryRequested' && (e.detail as { reason: string }).reason === 'FLEET_STORM').map((e) => e.detail.clusterId),
      );
    await waitFor(async () => (deferred().size === 3 ? true : undefined), { timeoutMs: 30_000, what: 'all three removals deferred by the storm' });
    const said = f.events.find((e) => e.detailType === 'RetryRequested' && (e.detail as { reason: string }).reason === 'FLEET_STORM')!.detail as {
      message: string;
    };
    expect(said.message).toMatch(/3 of 3 registered clusters opened incidents within the last 60 s \(c\d, c\d and c\d\), more than the storm threshold of 1/);
    expect(f.calls.memberRemove).toEqual([]);

    const ended = await runCli(['resume', '--state', f.statePath, '--storm', '--why', 'the machines really died']);
    expect(ended.code, ended.stderr).toBe(0);
    const done = await waitFor(async () => (endings(f).length >= 3 ? endings(f) : undefined), {
      timeoutMs: 90_000,
      what: 'an ending for each cluster after resume --storm',
    });
    expect(done.map((e) => e.detailType)).toEqual(['RemediationCompleted', 'RemediationCompleted', 'RemediationCompleted']);
  });

  it('a paused cluster: the plan says PAUSED, its leader is neither moved nor removed; resume lets it finish', async () => {
    const f = (fleet = await startFleet(1, fleetPolicy()));
    const paused = await runCli(['pause', '--state', f.statePath, '--cluster', 'c0', '--why', 'upgrading the control plane', '--by', 'ops']);
    expect(paused.code, paused.stderr).toBe(0);
    const leader = await f.labs[0]!.leader();
    await report(f, 'c0', leader.name);
    const waits = () => f.events.filter((e) => e.detailType === 'RetryRequested' && (e.detail as { reason: string }).reason === 'PAUSED');
    await waitFor(async () => (waits().length >= 2 ? true : undefined), { timeoutMs: 30_000, what: 'two PAUSED looks' });
    expect((waits()[0]!.detail as { message: string }).message).toMatch(
      /cluster c0 is paused by ops since .*upgrading the control plane.*held: .*move leadership/,
    );
    expect(f.calls.moveLeader).toEqual([]);
    expect(f.calls.memberRemove).toEqual([]);
    expect(await f.labs[0]!.memberList()).toHaveLength(3);
    // The CLI's plan, given the state file, says the same: it only reads the file.
    const planned = await runCli([
      'plan',
      '--endpoints',
      f.labs[0]!.endpoints().join(','),
      '--cluster',
      'c0',
      '--target',
      leader.name,
      '--state',
      f.statePath,
      '--json',
    ]);
    expect(planned.code, planned.stderr).toBe(0);
    expect(JSON.parse(planned.stdout)).toMatchObject({ outcome: 'planned', reason: 'PAUSED', message: expect.stringMatching(/cluster .* is paused by ops/) });

    const resumed = await runCli(['resume', '--state', f.statePath, '--cluster', 'c0']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const ending = await waitFor(async () => endings(f)[0], { timeoutMs: 60_000, what: 'the incident to end after resume' });
    expect(ending.detailType).toBe('RemediationCompleted');
    expect(f.calls.moveLeader.length).toBeGreaterThan(0);
    expect(await f.labs[0]!.memberList()).toHaveLength(2);
  });
});
