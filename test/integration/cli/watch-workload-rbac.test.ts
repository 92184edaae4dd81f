// `watch` with no more than the shipped RBAC grants: the real binary reaches the management cluster
// as rbac.yaml's ClusterRole allows, and each workload cluster with a kubeconfig of the ServiceAccount
// workload-rbac.yaml binds, named by --workload-kubeconfig-secret instead of Cluster API's admin
// <cluster>-kubeconfig. Both sides go through an RBAC proxy in front of the FAKE API server that
// refuses, as the API server does, whatever those rules do not grant.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadAllYaml, type KubernetesObject, type V1ClusterRole, type V1PolicyRule, type V1Role } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRbacProxy, type RbacProxy } from '../../support/rbac-proxy.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, type KubeWorld } from '../kube/kube-world.ts';
import { KUBE_CALL_TIMEOUT_MS } from '../e2e/pipeline.ts';
import { killService, runCli, startCli, type Service } from './support.ts';
import { requestServed } from './watch-support.ts';

const MANIFESTS = path.resolve(import.meta.dirname, '../../../infra/kubernetes');
const objectsIn = (file: string) => loadAllYaml(fs.readFileSync(path.join(MANIFESTS, file), 'utf8')) as KubernetesObject[];
const named = <T extends KubernetesObject>(objects: KubernetesObject[], kind: string, name: string): T =>
  objects.find((o) => o.kind === kind && o.metadata?.name === name) as T;

const SECRET_TEMPLATE = '{cluster}-etcd-remediator-kubeconfig';

describe.sequential('etcd-remediator watch under the shipped RBAC, the workload reached as its ServiceAccount', () => {
  let world: KubeWorld;
  let dir: string;
  let management: RbacProxy;
  let workload: RbacProxy;
  let kubeconfig: string;
  let service: Service | undefined;
  beforeAll(async () => {
    // No <cluster>-kubeconfig Secret: the admin kubeconfig is not there to fall back on.
    world = await startKubeWorld();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-rbac-'));
    const rbac = objectsIn('deploy/rbac.yaml');
    const workloadRbac = objectsIn('workload-rbac.yaml');
    // Each Role holds in its own namespace (the pods' in kube-system, the Node Events' in default).
    const namespaced: Record<string, V1PolicyRule[]> = {};
    for (const role of workloadRbac.filter((o): o is V1Role => o.kind === 'Role'))
      namespaced[role.metadata!.namespace!] = [...(namespaced[role.metadata!.namespace!] ?? []), ...(role.rules ?? [])];
    management = await startRbacProxy({
      upstream: world.fake.server,
      rules: { cluster: named<V1ClusterRole>(rbac, 'ClusterRole', 'etcd-remediator').rules ?? [] },
      token: 'management-sa-token',
      user: 'system:serviceaccount:etcd-remediator-system:etcd-remediator',
    });
    workload = await startRbacProxy({
      upstream: world.fake.server,
      rules: { cluster: named<V1ClusterRole>(workloadRbac, 'ClusterRole', 'etcd-remediator').rules ?? [], namespaced },
      token: 'workload-sa-token',
      user: 'system:serviceaccount:kube-system:etcd-remediator',
    });
    kubeconfig = path.join(dir, 'management.kubeconfig');
    fs.writeFileSync(kubeconfig, management.kubeconfigYaml(), { mode: 0o600 });
    world.fake.putSecret(CAPI_NAMESPACE, SECRET_TEMPLATE.replace('{cluster}', CAPI_CLUSTER), { value: workload.kubeconfigYaml() });
  });
  afterAll(async () => {
    await killService(service);
    await management?.stop();
    await workload?.stop();
    await world?.down();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a Secret name without {cluster} or with characters a Secret name cannot have (exit 2, naming the flag)', async () => {
    const cases = [
      ['etcd-remediator-kubeconfig', "must name each cluster's own Secret with {cluster} once"],
      ['{cluster}-{cluster}', "must name each cluster's own Secret with {cluster} once"],
      ['{cluster}_Kubeconfig', 'is not a Secret name'],
    ] as const;
    // All at once: a refusal gets no further than the flags.
    const runs = await Promise.all(
      cases.map(([value]) => runCli(['watch', '--kubeconfig', kubeconfig, '--state', path.join(dir, 'x.sqlite'), '--workload-kubeconfig-secret', value])),
    );
    for (const [i, [value, says]] of cases.entries()) {
      const run = runs[i]!;
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(`--workload-kubeconfig-secret: ${JSON.stringify(value)} ${says}`);
    }
  });

  it('the RBAC proxy is no pass-through: what the ServiceAccount is not granted is refused as the API server refuses it', async () => {
    const secrets = await fetch(`${workload.url}/api/v1/namespaces/kube-system/secrets/etcd-remediator-token`, {
      headers: { authorization: 'Bearer workload-sa-token' },
    });
    expect(secrets.status).toBe(403);
    expect(((await secrets.json()) as { message: string }).message).toBe(
      'secrets "etcd-remediator-token" is forbidden: User "system:serviceaccount:kube-system:etcd-remediator" cannot get resource "secrets" in API group "" in the namespace "kube-system"',
    );
    expect((await fetch(`${workload.url}/api/v1/nodes`, { headers: { authorization: 'Bearer management-sa-token' } })).status).toBe(401);
    expect((await fetch(`${workload.url}/api/v1/nodes`, { headers: { authorization: 'Bearer workload-sa-token' } })).status).toBe(200);
  });

  it('serves a request for a kubelet-down leader to completion, every call allowed, the workload reached as its ServiceAccount only', async () => {
    // Only what the watcher asks from here on (the test above asked for a Secret on purpose).
    management.decisions.length = 0;
    workload.decisions.length = 0;
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
      '--workload-kubeconfig-secret',
      SECRET_TEMPLATE,
    ]);
    const machine = world.machineOf(leader);
    const status = await requestServed(
      service,
      world,
      machine,
      (s) => s.phase === 'AwaitingReplacement' || s.phase === 'Failed' || s.phase === 'Blocked',
      'the request to end',
      40_000,
    );
    // Under load the lab's heartbeats can lapse and leadership leave the sick member on its own
    // before the move (not-needed); the calls allowed are this test's subject.
    expect(status, status.message).toMatchObject({ phase: 'AwaitingReplacement' });
    expect(['moved', 'not-needed']).toContain(status.leaderMove);
    expect((await world.lab.memberList()).map((m) => m.id)).not.toContain(leader.id);
    expect((await world.readMachine(machine))?.deleting).toBe(true);

    const shown = (d: { verb: string; group: string; resource: string; name?: string }) => `${d.verb} ${d.group}/${d.resource}${d.name ? ` ${d.name}` : ''}`;
    expect(management.decisions.filter((d) => !d.allowed).map(shown), 'refused in the management cluster').toEqual([]);
    expect(workload.decisions.filter((d) => !d.allowed).map(shown), 'refused in the workload cluster').toEqual([]);
    // The workload kubeconfig came from the Secret the flag names, and Cluster API's was never asked for.
    const secretsRead = management.decisions.filter((d) => d.resource === 'secrets').map((d) => d.name);
    expect(secretsRead).toContain(`${CAPI_CLUSTER}-etcd-remediator-kubeconfig`);
    expect(secretsRead).not.toContain(`${CAPI_CLUSTER}-kubeconfig`);
    // The workload's own objects went to the workload proxy alone, as its ServiceAccount.
    const workloadCalls = new Set(workload.decisions.map(shown));
    for (const call of ['list /pods', 'list /nodes']) expect(workloadCalls).toContain(call);
    expect(workload.decisions.some((d) => d.resource === 'pods/exec' || d.resource === 'pods/portforward')).toBe(true);
    expect(management.decisions.filter((d) => d.resource.startsWith('pods') || d.resource === 'nodes').map(shown)).toEqual([]);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  }, 90_000);
});
