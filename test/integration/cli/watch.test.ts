// `etcd-remediator watch` as a user runs it: a real process watching the FAKE management API
// server, which also serves the workload cluster (a real etcd lab behind port-forward and exec).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, type KubeWorld } from '../kube/kube-world.ts';
import { KUBE_CALL_TIMEOUT_MS } from '../e2e/pipeline.ts';
import { killService, runCli, startCli, type Service } from './support.ts';
import { requestServed } from './watch-support.ts';

describe.sequential('etcd-remediator watch', () => {
  let world: KubeWorld;
  let dir: string;
  let kubeconfig: string;
  let service: Service | undefined;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-'));
    kubeconfig = path.join(dir, 'management.kubeconfig');
    // The management kubeconfig, and the workload's in the Secret where Cluster API keeps it (the fake serves both sides).
    world = await startKubeWorld(3, { kubeconfigFile: kubeconfig });
  });
  afterAll(async () => {
    await killService(service);
    await world?.down();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start without one source of management access, naming the flags', async () => {
    // Two refusals at once: neither gets as far as the state file.
    const [run, direct] = await Promise.all([
      runCli(['watch', '--state', path.join(dir, 'x.sqlite')]),
      runCli(['watch', '--kubeconfig', kubeconfig, '--state', path.join(dir, 'x.sqlite'), '--paths', 'direct']),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('give one of --kubeconfig F (the management cluster) and --in-cluster');
    expect(direct.code).toBe(2);
    expect(direct.stderr).toContain('--paths: direct needs client URLs');
  });

  it('serves a request for a kubelet-down leader to completion and stops cleanly on SIGTERM', async () => {
    const leader = await world.lab.leader();
    world.fake.kubeletDown(leader.name);
    service = startCli([
      'watch',
      '--kubeconfig',
      kubeconfig,
      '--state',
      path.join(dir, 'state.sqlite'),
      '--election-timeout',
      '500ms',
      '--timeout',
      `${KUBE_CALL_TIMEOUT_MS}ms`,
    ]);
    const machine = world.machineOf(leader);
    const status = await requestServed(service, world, machine, (s) => s.phase === 'AwaitingReplacement', 'the request to await its replacement', 60_000);
    // The move over the relay is the kube scenarios' subject; here the request must be served.
    // Under load the lab's 50 ms heartbeats can lapse and leadership leave the sick member on its
    // own before the move, which the pipeline then rightly reports as not needed.
    expect(['moved', 'not-needed']).toContain(status.leaderMove);
    expect((await world.readMachine(machine))?.deleting).toBe(true);
    expect((await world.lab.memberList()).map((m) => m.id)).not.toContain(leader.id);
    // The outcome as a JSON line on stdout, for the cluster `<namespace>/<cluster>`.
    const line = await service.until(
      () =>
        service!
          .stdout()
          .split('\n')
          .find((l) => l.includes(status.incidentId!)),
      'the outcome line',
      5_000,
    );
    expect(JSON.parse(line)).toMatchObject({ outcome: 'awaiting-replacement', clusterId: `${CAPI_NAMESPACE}/${CAPI_CLUSTER}` });

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
