// `etcd-remediator watch` as a user runs it: a real process watching the FAKE management API
// server, which also serves the workload cluster (a real etcd lab behind port-forward and exec).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, type KubeWorld } from '../kube/kube-world.ts';
import { killService, runCli, startCli, type Service } from './support.ts';

describe.sequential('etcd-remediator watch', () => {
  let world: KubeWorld;
  let dir: string;
  let service: Service | undefined;
  beforeAll(async () => {
    world = await startKubeWorld();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-'));
    // Where Cluster API keeps the workload kubeconfig (the fake serves both sides).
    world.fake.putSecret(CAPI_NAMESPACE, `${CAPI_CLUSTER}-kubeconfig`, { value: world.fake.kubeconfigYaml() });
  });
  afterAll(async () => {
    await killService(service);
    await world?.down();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start without one source of management access, naming the flags', async () => {
    const run = await runCli(['watch', '--state', path.join(dir, 'x.sqlite')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('give one of --kubeconfig F (the management cluster) and --in-cluster');
    const direct = await runCli(['watch', '--kubeconfig', world.fake.writeKubeconfig(path.join(dir, 'k')), '--state', path.join(dir, 'x.sqlite'), '--paths', 'direct']);
    expect(direct.code).toBe(2);
    expect(direct.stderr).toContain('--paths: direct needs client URLs');
  });

  it('serves a request for a kubelet-down leader to completion and stops cleanly on SIGTERM', async () => {
    const leader = await world.lab.leader();
    world.fake.kubeletDown(leader.name);
    const kubeconfig = world.fake.writeKubeconfig(path.join(dir, 'management.kubeconfig'));
    service = startCli(['watch', '--kubeconfig', kubeconfig, '--state', path.join(dir, 'state.sqlite'), '--election-timeout', '500ms', '--timeout', '1s']);
    await service.waitForStderr(/watching EtcdRemediationRequests/);

    const objects = world.fake.kubeConfig().makeApiClient(CustomObjectsApi);
    const coordinates = { group: REQUEST_GROUP, version: REQUEST_VERSION, namespace: CAPI_NAMESPACE, plural: REQUEST_PLURAL };
    const machine = world.machineOf(leader);
    await objects.createNamespacedCustomObject({
      ...coordinates,
      body: { apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`, kind: 'EtcdRemediationRequest', metadata: { name: machine, labels: { 'cluster.x-k8s.io/cluster-name': CAPI_CLUSTER } }, spec: {} },
    });
    const status = await service.until(async () => {
      const request = (await objects.getNamespacedCustomObject({ ...coordinates, name: machine })) as { status?: { phase?: string; leaderMove?: string; incidentId?: string } };
      return request.status?.phase === 'Completed' ? request.status : undefined;
    }, 'the request to complete', 60_000);
    expect(status.leaderMove).toBe('moved');
    expect((await world.readMachine(machine))?.deleting).toBe(true);
    expect((await world.lab.memberList()).map((m) => m.id)).not.toContain(leader.id);
    // The outcome as a JSON line on stdout, for the cluster `<namespace>/<cluster>`.
    const line = await service.until(() => service!.stdout().split('\n').find((l) => l.includes(status.incidentId!)), 'the outcome line', 5_000);
    expect(JSON.parse(line)).toMatchObject({ outcome: 'remediated', clusterId: `${CAPI_NAMESPACE}/${CAPI_CLUSTER}` });

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
