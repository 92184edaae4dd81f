// What a person on call reads with the real kubectl after `remediate --kubeconfig … --node`, on a
// real etcd lab behind the FAKE API server, without Cluster API: each decision as an Event on the
// target's Node, in namespace default (`kubectl get events --field-selector involvedObject.kind=Node`,
// `kubectl describe node`), and the same from `run`. The workload cluster is reached through an RBAC proxy as the ServiceAccount
// workload-rbac.yaml binds: with its rules every call is allowed; without the events Role the
// Event writes are refused, said once, and the remediation goes on.
import { conditionReason } from '../../../functions/core/kubernetes/index.ts';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadAllYaml, type CoreV1Event, type KubernetesObject, type V1ClusterRole, type V1PolicyRule, type V1Role } from '@kubernetes/client-node';
import { describe, expect, it, type TestContext } from 'vitest';
import type { CliResult } from '../../../infra/cli/output.ts';
import { startRbacProxy, type RbacProxy } from '../../support/rbac-proxy.ts';
import { metadataOf, resourceType } from '../../support/fakes/kube/store.ts';
import { startKubeWorld, worldTlsFlags, type KubeWorld } from '../kube/kube-world.ts';
import { jsonOf, killService, runCli, startCli } from './support.ts';

const exec = promisify(execFile);
const NODES = resourceType('', 'nodes')!;
const WORKLOAD_RBAC = loadAllYaml(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../../infra/kubernetes/workload-rbac.yaml'), 'utf8'),
) as KubernetesObject[];
// etcd refuses reconfiguration for ~5 s after start ("unhealthy cluster"): a short backoff retries it promptly.
const LAB = ['--election-timeout', '500ms', '--timeout', '3s', '--backoff', '300ms'];

/** KUBECTL_BIN, or the Cloud SDK's kubectl, or the one on PATH. */
function findKubectl(): string | undefined {
  const candidates = [
    process.env.KUBECTL_BIN,
    '/usr/lib/google-cloud-sdk/bin/kubectl',
    ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'kubectl')),
  ];
  return candidates.find((bin): bin is string => bin !== undefined && fs.existsSync(bin));
}
const KUBECTL = findKubectl();

/** The shipped workload rules, by where they are bound; `withoutEvents` drops the rules on events. */
function workloadRules(withoutEvents = false): { cluster: V1PolicyRule[]; namespaced: Record<string, V1PolicyRule[]> } {
  const keep = (rules: V1PolicyRule[] | undefined) => (rules ?? []).filter((rule) => !(withoutEvents && rule.resources?.includes('events')));
  const namespaced: Record<string, V1PolicyRule[]> = {};
  for (const role of WORKLOAD_RBAC.filter((o): o is V1Role => o.kind === 'Role'))
    namespaced[role.metadata!.namespace!] = [...(namespaced[role.metadata!.namespace!] ?? []), ...keep(role.rules)];
  return { cluster: WORKLOAD_RBAC.filter((o): o is V1ClusterRole => o.kind === 'ClusterRole').flatMap((role) => keep(role.rules)), namespaced };
}

interface Lab {
  world: KubeWorld;
  proxy: RbacProxy;
  /** The ServiceAccount's, through the proxy. */
  kubeconfig: string;
  /** The fake's admin kubeconfig, for kubectl. */
  admin: string;
  state: string;
}

async function lab(test: TestContext, withoutEvents = false): Promise<Lab> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-events-'));
  test.onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const admin = path.join(dir, 'admin.kubeconfig');
  const world = await startKubeWorld(3, { kubeconfigFile: admin });
  test.onTestFinished(() => world.down());
  const proxy = await startRbacProxy({
    upstream: world.fake.server,
    rules: workloadRules(withoutEvents),
    token: 'workload-sa-token',
    user: 'system:serviceaccount:kube-system:etcd-remediator',
  });
  test.onTestFinished(() => proxy.stop());
  const kubeconfig = path.join(dir, 'workload.kubeconfig');
  fs.writeFileSync(kubeconfig, proxy.kubeconfigYaml(), { mode: 0o600 });
  return { world, proxy, kubeconfig, admin, state: path.join(dir, 'state.sqlite') };
}

async function kubectl(admin: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec(KUBECTL!, ['--kubeconfig', admin, ...args], { timeout: 20_000 });
  return stdout;
}

const shown = (d: { verb: string; group: string; resource: string; namespace?: string }) =>
  `${d.verb} ${d.group}/${d.resource}${d.namespace ? ` in ${d.namespace}` : ''}`;

describe.skipIf(KUBECTL === undefined).concurrent('remediate without Cluster API: the decisions as Events on the Node, read with the real kubectl', () => {
  it('a kubelet-down leader by --node: each decision on its Node in default, kubectl get events and describe node list them, every call allowed by the shipped RBAC', async (test) => {
    const { world, proxy, kubeconfig, admin, state } = await lab(test);
    const leader = await world.lab.leader();
    const node = leader.name;
    world.fake.kubeletDown(node);

    const run = await runCli(['remediate', '--kubeconfig', kubeconfig, '--node', node, ...worldTlsFlags(world), ...LAB, '--state', state, '--json'], {
      timeoutMs: 40_000,
    });

    expect(run.code, run.stderr).toBe(6);
    expect(jsonOf<CliResult>(run)).toMatchObject({ outcome: 'awaiting-replacement', target: { memberId: leader.id } });
    expect(proxy.decisions.filter((d) => !d.allowed).map(shown), 'refused in the workload cluster').toEqual([]);
    expect(proxy.decisions.filter((d) => d.resource === 'events').map(shown)).toContain('create /events in default');

    const listed = JSON.parse(
      await kubectl(admin, 'get', 'events', '-n', 'default', '--field-selector', `involvedObject.kind=Node,involvedObject.name=${node}`, '-o', 'json'),
    ) as { items: CoreV1Event[] };
    const events = listed.items.sort((a, b) => String(a.eventTime).localeCompare(String(b.eventTime)));
    const uid = metadataOf(world.fake.store.get(NODES, '', node)).uid;
    for (const event of events) {
      expect(event.involvedObject).toEqual({ kind: 'Node', apiVersion: 'v1', name: node, uid });
      expect(event).toMatchObject({ metadata: { namespace: 'default' }, reportingComponent: 'etcd-remediator', source: { component: 'etcd-remediator' } });
      expect(event.message, event.reason).toMatch(/\S{3,}.* /);
    }
    // The same decisions the run printed, each once: a repeat of one (same reason and sentence) counted on its Event.
    const printed = [...run.stderr.matchAll(/(RemediationApproved|RetryRequested|RemediationCompleted|LeaderMoved)\s+(\S+)/g)].map((m) =>
      conditionReason(m[1] === 'RemediationCompleted' ? 'REPLACEMENT_AWAITED' : m[1] === 'LeaderMoved' ? 'LEADER_MOVED' : m[2]!),
    );
    expect(events.flatMap((e) => Array.from({ length: e.count ?? 1 }, () => e.reason)).sort()).toEqual([...printed].sort());
    expect([...new Set(events.map((e) => e.reason))]).toEqual([...new Set(printed)]);
    expect(events.at(-1)).toMatchObject({ reason: 'ReplacementAwaited', type: 'Normal', action: 'RemoveMember' });
    expect(events.at(-1)!.message).toContain(`etcd member ${leader.name} (${leader.id}) was removed`);

    const described = await kubectl(admin, 'describe', 'node', node);
    const section = described.slice(described.indexOf('\nEvents:'));
    for (const reason of new Set(printed)) expect(section).toContain(reason);
    expect(section).toMatch(/Normal\s+ReplacementAwaited\s+\S+\s+etcd-remediator\s+etcd member/);
  }, 60_000);

  it('run, without the right to write events: each refused (403), said once, and the follower removed all the same', async (test) => {
    const { world, proxy, kubeconfig, state } = await lab(test, true);
    const leader = await world.lab.leader();
    const follower = world.lab.members.find((m) => m.id !== leader.id)!;
    world.fake.kubeletDown(follower.name);
    const client = world.tls!.client;
    const config = path.join(path.dirname(state), 'run.json');
    // etcd refuses reconfiguration for ~5 s after start ("unhealthy cluster"): a short backoff retries it promptly.
    const policy = { electionTimeout: '500ms', callTimeout: '3s', backoff: { base: '300ms', cap: '2s' } };
    const tls = { cacert: client.caFile, cert: client.certFile, key: client.keyFile };
    fs.writeFileSync(config, JSON.stringify({ state, listen: '127.0.0.1:0', clusters: [{ clusterId: 'wl', kubeconfig, tls, policy }] }));
    const report = { clusterId: 'wl', target: { nodeName: follower.name }, reason: 'kubelet not ready', source: 'test', observedAt: new Date().toISOString() };

    // stdin its only input: run finishes the incident, prints its outcome and exits.
    const service = startCli(['run', '--config', config]);
    test.onTestFinished(() => killService(service));
    service.child.stdin!.end(`${JSON.stringify(report)}\n`);
    const code = await service.exited;
    const run = { stdout: service.stdout(), stderr: service.stderr() };

    expect(code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n')[0]!)).toMatchObject({ outcome: 'awaiting-replacement', reason: 'TARGET_IS_FOLLOWER' });
    expect((await world.lab.memberList()).map((m) => m.id)).not.toContain(follower.id);
    const refused = proxy.decisions.filter((d) => !d.allowed);
    expect(refused.length).toBeGreaterThanOrEqual(2);
    expect(new Set(refused.map(shown))).toEqual(new Set(['create /events in default']));
    const said = run.stderr.split('\n').filter((line) => line.includes('Kubernetes Event not written'));
    expect(said, run.stderr).toHaveLength(1);
    expect(said[0]).toContain(`Node ${follower.name}`);
    expect(said[0]).toContain('HTTP 403');
  }, 60_000);
});
