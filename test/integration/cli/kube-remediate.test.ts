// remediate by Machine and by Node through the FAKE Kubernetes API server, on a real etcd lab with
// no --endpoints: the members are reached only over port-forward and the exec relay, as Cluster
// API reaches them. Each remediation removes a member, so each has a world of its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import type { LabMember } from '../../../infra/lab/lab.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, worldTlsFlags, type KubeWorld } from '../kube/kube-world.ts';
import type { CliResult } from '../../../infra/cli/output.ts';
import { jsonOf, runCli } from './support.ts';

const EVENTS = resourceType('', 'events')!;

/** The reasons of the Events the fake holds on `kind` `name`, in `namespace`. */
const eventReasons = (w: KubeWorld, namespace: string, kind: string, name: string): string[] =>
  w.fake.store
    .list(EVENTS, namespace, null)
    .filter((e) => (e.involvedObject as { kind?: string; name?: string }).kind === kind && (e.involvedObject as { name?: string }).name === name)
    .map((e) => e.reason as string);

// etcd refuses reconfiguration for ~5 s after start ("unhealthy cluster"): a short backoff retries it promptly.
const LAB = ['--election-timeout', '500ms', '--timeout', '3s', '--backoff', '300ms'];

/** A world for this test alone, gone when it ends (the tests run at once). */
async function world(test: TestContext): Promise<{ world: KubeWorld; kubeconfig: string; state: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-kube-remediate-'));
  test.onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const started = await startKubeWorld(3, { kubeconfigFile: kubeconfig });
  test.onTestFinished(() => started.down());
  return { world: started, kubeconfig, state: path.join(dir, 'state.sqlite') };
}

/** Exactly the target went, and the others elect a leader. */
async function expectRemoved(w: KubeWorld, target: LabMember, result: CliResult): Promise<void> {
  expect(result.target).toEqual({ memberId: target.id, name: target.name });
  expect((await w.lab.memberList()).map((m) => m.id).sort()).toEqual(
    w.lab.members
      .filter((m) => m.id !== target.id)
      .map((m) => m.id)
      .sort(),
  );
  const leader = await w.lab.waitForLeader({ excluding: [target.name], timeoutMs: 10_000 });
  expect(result.evidence.newLeader).toMatchObject({ id: leader.id });
}

describe.concurrent('remediate through Kubernetes, without --endpoints', () => {
  it('--machine on a leader whose kubelet is down: leadership moved over the exec relay, the member removed, the Machine deleting', async (test) => {
    const { world: w, kubeconfig, state } = await world(test);
    const leader = await w.lab.leader();
    w.fake.kubeletDown(leader.name);

    const run = await runCli(
      ['remediate', '--kubeconfig', kubeconfig, '--cluster', CAPI_CLUSTER, '--machine', w.machineOf(leader), ...LAB, '--state', state, '--json'],
      { timeoutMs: 60_000 },
    );

    expect(run.code, run.stderr).toBe(6);
    const result = jsonOf<CliResult>(run);
    expect(result).toMatchObject({ outcome: 'awaiting-replacement', leaderMove: 'moved', clusterId: CAPI_CLUSTER });
    await expectRemoved(w, leader, result);
    expect((await w.readMachine(w.machineOf(leader)))?.deleting).toBe(true);
    expect(w.fake.requestCount('DELETE', `/machines/${w.machineOf(leader)}`)).toBe(1);
    // Moved over the relay, the first approval saying why port-forward could not serve: the kubelet.
    // (The result's reason is the last approval's: once moved, the target is a follower.)
    expect(run.stderr).toMatch(new RegExp(`LeaderMoved\\s+leadership moved from ${leader.id} to \\S+ over exec-relay`));
    expect(run.stderr).toMatch(
      new RegExp(`RemediationApproved\\s+LEADER_MOVED .*port-forward kube-system/etcd-${leader.name}:2379 refused: .*error dialing backend`),
    );
    // With Cluster API the decisions go on the Machine, as watch writes them, and none on the Node.
    expect(eventReasons(w, CAPI_NAMESPACE, 'Machine', w.machineOf(leader))).toEqual(expect.arrayContaining(['LeaderMoved', 'ReplacementAwaited']));
    expect(eventReasons(w, 'default', 'Node', leader.name)).toEqual([]);
  });

  it('--node on a follower whose kubelet is down, the workload kubeconfig alone: removed with no move, no Machine touched', async (test) => {
    const { world: w, kubeconfig, state } = await world(test);
    const leader = await w.lab.leader();
    const follower = w.lab.members.find((m) => m.id !== leader.id)!;
    w.fake.kubeletDown(follower.name);

    // kubeadm without Cluster API: the operator gives etcd's client certificate.
    const run = await runCli(['remediate', '--kubeconfig', kubeconfig, '--node', follower.name, ...worldTlsFlags(w), ...LAB, '--state', state, '--json'], {
      timeoutMs: 60_000,
    });

    expect(run.code, run.stderr).toBe(6);
    const result = jsonOf<CliResult>(run);
    expect(result).toMatchObject({ outcome: 'awaiting-replacement', reason: 'TARGET_IS_FOLLOWER', leaderMove: 'not-needed', clusterId: 'default' });
    await expectRemoved(w, follower, result);
    // Without --cluster there is no management cluster: the Machine is Cluster API's to replace.
    expect((await w.readMachine(w.machineOf(follower)))?.deleting).toBe(false);
    expect(w.fake.requestCount('DELETE', `/machines/${w.machineOf(follower)}`)).toBe(0);
    // Without it, on the follower's Node (node-events.test.ts reads them with kubectl).
    expect(eventReasons(w, 'default', 'Node', follower.name)).toEqual(expect.arrayContaining(['TargetIsFollower', 'ReplacementAwaited']));
    expect(eventReasons(w, CAPI_NAMESPACE, 'Machine', w.machineOf(follower))).toEqual([]);
  });
});
