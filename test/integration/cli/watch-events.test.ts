// What a person on call reads with the real kubectl while `watch` serves a request on a real etcd
// lab behind the FAKE API server: each decision as an Event on the request's Machine (`kubectl get
// events --field-selector involvedObject.name=…`, `kubectl describe machine`), a repeat counted on
// the one Event, and the request's conditions (`kubectl wait --for=condition=…`, `kubectl describe`).
import { conditionReason } from '../../../functions/core/kubernetes/index.ts';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreV1Event } from '@kubernetes/client-node';
import { resourceType } from '../../support/fakes/kube/store.ts';
import type { JsonObject } from '../../support/fakes/kube/patch.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, type KubeWorld } from '../kube/kube-world.ts';
import { requestsIn } from '../kube/remediation-requests.ts';
import { KUBE_CALL_TIMEOUT_MS } from '../e2e/pipeline.ts';
import { killService, startCli, type Service } from './support.ts';
import { WATCHING } from './watch-support.ts';

const run = promisify(execFile);
const CLUSTERS = resourceType('cluster.x-k8s.io', 'clusters')!;
const EVENTS = resourceType('', 'events')!;

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

/** A v1beta1 Cluster as Cluster API stores it, paused by spec.paused or not. */
const cluster = (paused: boolean): JsonObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'Cluster',
  metadata: { name: CAPI_CLUSTER, namespace: CAPI_NAMESPACE },
  spec: { paused },
  status: { phase: 'Provisioned', controlPlaneReady: true, infrastructureReady: true },
});

describe.skipIf(KUBECTL === undefined).sequential('watch: Kubernetes Events and conditions, read with the real kubectl', () => {
  let world: KubeWorld;
  let dir: string;
  let kubeconfig: string;
  let service: Service | undefined;
  const kubectl = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      const { stdout, stderr } = await run(KUBECTL!, ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    }
  };
  const eventsOf = async (machine: string): Promise<CoreV1Event[]> => {
    const got = await kubectl('get', 'events', '-n', CAPI_NAMESPACE, '--field-selector', `involvedObject.name=${machine}`, '-o', 'json');
    expect(got.code, got.stderr).toBe(0);
    return (JSON.parse(got.stdout) as { items: CoreV1Event[] }).items;
  };
  /** The fake's own Events of the Machine with this reason (a cheap look while waiting). */
  const stored = (machine: string, reason: string) =>
    world.fake.store.list(EVENTS, CAPI_NAMESPACE, null).filter((e) => (e.involvedObject as JsonObject).name === machine && e.reason === reason);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-events-'));
    kubeconfig = path.join(dir, 'management.kubeconfig');
    world = await startKubeWorld(3, { kubeconfigFile: kubeconfig });
  });
  afterAll(async () => {
    await killService(service);
    await world?.down();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("says each decision on the Machine, a repeat counted on one Event, and the request's conditions", async () => {
    const leader = await world.lab.leader();
    const machine = world.machineOf(leader);
    // Held first: Cluster API paused the Cluster, so the request waits, and says so on its Machine.
    world.fake.store.put(CLUSTERS, cluster(true));
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
    await service.waitForStderr(WATCHING);
    const requests = requestsIn(world.fake.kubeConfig(), CAPI_NAMESPACE);
    await requests.create(machine, CAPI_CLUSTER);
    await service.until(() => (stored(machine, 'ClusterPaused').length === 1 ? true : undefined), 'the hold said as an Event', 10_000);

    // One round cannot read the Cluster; the next finds it paused again and says the same once more.
    const unreadable = world.fake.failNext({ method: 'GET', path: new RegExp(`/clusters/${CAPI_CLUSTER}$`) });
    await service.until(
      () => (unreadable.fired === 1 && stored(machine, 'ClusterPaused')[0]?.count === 2 ? true : undefined),
      'the hold counted twice',
      15_000,
    );
    // What a person reads of the hold, asked at once: the next round (2 s on) may not count it again meanwhile.
    const [held, table, described, paused] = await Promise.all([
      eventsOf(machine),
      kubectl('get', 'events', '-n', CAPI_NAMESPACE, '--field-selector', `involvedObject.name=${machine}`, '-o', 'wide'),
      kubectl('describe', 'machine', machine, '-n', CAPI_NAMESPACE),
      kubectl('wait', '--for=condition=Paused', `etcdremediationrequest/${machine}`, '-n', CAPI_NAMESPACE, '--timeout=10s'),
    ]);
    expect(held.filter((e) => e.reason === 'ClusterPaused')).toHaveLength(1);
    expect(held[0]).toMatchObject({
      type: 'Warning',
      count: 2,
      action: 'Hold',
      reportingComponent: 'etcd-remediator',
      involvedObject: { kind: 'Machine', name: machine, namespace: CAPI_NAMESPACE },
    });
    expect(held[0]!.message).toContain('spec.paused');
    // As a person reads them: the server's table, the repeat in its COUNT column.
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+SUBOBJECT\s+SOURCE\s+MESSAGE\s+FIRST SEEN\s+COUNT\s+NAME\n/);
    expect(table.stdout).toMatch(
      new RegExp(
        `Warning\\s+ClusterPaused\\s+machine/${machine}\\s+etcd-remediator, \\S+\\s+Cluster default/wl is paused .*\\s+2\\s+${machine}\\.[0-9a-f]+\\n`,
      ),
    );
    // kubectl describe finds a Machine's Events by its uid too: they are on this Machine.
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toMatch(/Events:[\s\S]*Warning\s+ClusterPaused\s+.*\(x2 over .*\)\s+etcd-remediator\s+/);
    expect(paused.code, paused.stderr).toBe(0);

    // Unpaused, with the leader's kubelet down: served to the removal.
    world.fake.kubeletDown(leader.name);
    world.fake.store.put(CLUSTERS, cluster(false));
    const status = await requests.statusWith(machine, (s) => s.phase === 'AwaitingReplacement', 'the request to await its replacement', { timeoutMs: 60_000 });
    const remediated = await kubectl('wait', '--for=condition=Remediated', `etcdremediationrequest/${machine}`, '-n', CAPI_NAMESPACE, '--timeout=20s');
    expect(remediated.code, remediated.stderr).toBe(0);
    // Asked side by side: whether it turns Ready within 1 s, the Events, and the request as described.
    const [ready, said, request] = await Promise.all([
      kubectl('wait', '--for=condition=Ready', `etcdremediationrequest/${machine}`, '-n', CAPI_NAMESPACE, '--timeout=1s'),
      service.until(
        async () => {
          const events = await eventsOf(machine);
          return events.some((e) => e.action === 'RemoveMember') ? events : undefined;
        },
        'the removal said as an Event',
        10_000,
      ),
      kubectl('describe', 'etcdremediationrequest', machine, '-n', CAPI_NAMESPACE),
    ]);
    // Not Ready: the cluster is short until the replacement joins.
    expect(ready.code).not.toBe(0);

    for (const event of said) {
      expect(event.reason).toMatch(/^[A-Z][A-Za-z]+$/);
      expect(event.message!.length).toBeGreaterThan(0);
      expect(Buffer.byteLength(event.message!)).toBeLessThanOrEqual(1024);
      expect(event.reportingComponent).toBe('etcd-remediator');
      expect(event.reportingInstance).toBeTruthy();
    }
    // The approval, with the reason code and sentence the request's status carries.
    const approval = said.find((e) => e.action === 'Approve');
    expect(approval).toMatchObject({ type: 'Normal', reason: conditionReason(status.reasonCode!) });
    // One Event per distinct decision: none is there twice.
    const keys = said.map((e) => `${e.type} ${e.reason} ${e.message}`);
    expect(new Set(keys).size).toBe(keys.length);

    expect(request.code, request.stderr).toBe(0);
    expect(request.stdout).toMatch(/Conditions:[\s\S]*Reason:\s+\w+[\s\S]*Status:\s+True\s+Type:\s+Remediated/);
    expect(request.stdout).toMatch(/Status:\s+False\s+Type:\s+Ready/);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
