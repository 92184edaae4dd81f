// The request watcher when the management API server fails once, injected in the FAKE API server:
// a status write that fails is written again, and a kubeconfig Secret that cannot be read is read
// again, so the request still ends Completed with one incident and one member removed. Wired as
// `etcd-remediator watch` wires it: the embedded runtime, the Cluster API directory, real etcd.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiException, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it, type TestContext } from 'vitest';
import { isTerminalEvent } from '../../../events/catalogue.ts';
import { kubeconfigSecretName } from '../../../functions/adapters/kube/cluster-api/cluster-access.ts';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { Log } from '../../../functions/ports/log.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { capiClusterId, createCapiDirectory } from '../../../functions/adapters/local/capi-directory.ts';
import { createEtcdAccess } from '../../../functions/adapters/local/etcd-access.ts';
import { createKubeEtcd } from '../../../functions/adapters/kube/index.ts';
import { startRequestWatcher, type RequestWatcher } from '../../../infra/kubernetes/request-watcher.ts';
import { createLocalRuntime, type LocalRuntime } from '../../../infra/runtime/runtime.ts';
import { startKubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { KUBE_CALL_TIMEOUT_MS, labPolicy, recordCalls, type CallLog } from '../e2e/pipeline.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, type KubeWorld } from './kube-world.ts';
import { MHC_REASON, recordPhases, requestsIn } from './remediation-requests.ts';
import { lanesOf } from './lanes.ts';

const CLUSTER_ID = capiClusterId(CAPI_NAMESPACE, CAPI_CLUSTER);
const SECRET_PATH = `/api/v1/namespaces/${CAPI_NAMESPACE}/secrets/${kubeconfigSecretName(CAPI_CLUSTER)}`;
const coordinates = { group: REQUEST_GROUP, version: REQUEST_VERSION, namespace: CAPI_NAMESPACE, plural: REQUEST_PLURAL };

interface Said {
  level: keyof Log;
  message: string;
  fields: Record<string, unknown>;
}

interface World {
  world: KubeWorld;
  runtime: LocalRuntime;
  calls: CallLog;
  /** The reasons of the RemediationApproved events, in order. */
  approvals: string[];
  /** What the watcher logged, and what the runtime said of a handler that failed for good. */
  said: Said[];
  /** Every error the Cluster API directory gave the runtime, as the runtime's steps saw it. */
  directoryErrors: string[];
  /** The request's status phases as the API server stored them, in order. */
  phases: string[];
  machine: string;
  statusPath: string;
}

// Every case removes a member, so each has a world of its own, booted ahead. Most of a case is
// waiting (on the backoffs, the new leader's election): a case starts beside another once that
// one's plan is made (its looks over the relays, whose deadlines a loaded machine threatens, are
// behind it), two at most, and no world boots beside a case's first steps (lanes.ts). A
// case's timeout counts its wait for its turn.
const worlds = lanesOf({ cases: 3, lanes: 2, ahead: 1, beginNow: true, start: () => startKubeWorld(), stop: (world: KubeWorld) => world.down() });

/** The `watch` command's wiring on a kube world whose leader's kubelet is down (scenario 4); all of it undone when `test` finishes. */
async function setUp(test: TestContext, options: { reportAgainMs?: number } = {}): Promise<World> {
  const { world, settled } = await worlds.take(test);
  world.putKubeconfigSecret();
  const leader = await world.lab.waitForLeader();
  world.fake.kubeletDown(leader.name);
  const machine = world.machineOf(leader);

  const said: Said[] = [];
  const record =
    (level: keyof Log) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void said.push({ level, message, fields });
  const log: Log = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watcher-faults-'));
  test.onTestFinished(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const calls: CallLog = { memberRemove: [], removed: [], removedAt: [], moveLeader: [] };
  const access = createEtcdAccess(createKubeEtcd);
  const capi = createCapiDirectory({
    management: world.fake.kubeConfig(),
    managementSource: world.fake.kubeconfigYaml(),
    // The faults here are the management API server's, not etcd's: probes get the kube pipelines' deadline.
    policy: parsePolicy({ ...labPolicy, callTimeoutMs: KUBE_CALL_TIMEOUT_MS, pathOrder: ['port-forward', 'exec-relay'] }),
  });
  const directoryErrors: string[] = [];
  const runtime = await createLocalRuntime({
    statePath: path.join(dir, 'state.sqlite'),
    directory: {
      get: (clusterId) =>
        capi.get(clusterId).catch((error: unknown) => {
          directoryErrors.push(String(error));
          throw error;
        }),
    },
    etcdFor: (cluster) => {
      const real = access.etcdFor(cluster);
      return { ...real, transport: recordCalls(real.transport, calls) };
    },
    logLevel: 'SILENT',
    // As Lambda redelivers a failed invocation, sooner: the dead letter comes after the same three deliveries.
    redeliveryDelaysMs: [200, 500],
    onHandlerError: (fn, error) => said.push({ level: 'error', message: `${fn} failed`, fields: { error: String(error) } }),
  });
  test.onTestFinished(async () => {
    await runtime.stop({ drainTimeoutMs: 5_000 });
    await access.close();
  });
  const approvals: string[] = [];
  const unsubscribeBus = runtime.bus.subscribe((event) => {
    if (event.detailType === 'RemediationApproved') approvals.push((event.detail as { reason: string }).reason);
    // Approved (or ended): the plan is made, and what is left is the removal and its aftermath.
    if (event.detailType === 'RemediationApproved' || isTerminalEvent(event)) settled();
  });
  test.onTestFinished(async () => void unsubscribeBus());
  await runtime.start();

  const { phases, stop } = recordPhases(world.fake.store, machine);
  test.onTestFinished(async () => stop());

  const watcher: RequestWatcher = startRequestWatcher({
    management: world.fake.kubeConfig(),
    runtime: {
      ...runtime,
      clock: systemClock,
      submit: (detail, source) => runtime.submit(detail, source),
      subscribe: (observer) => runtime.bus.subscribe(observer),
    },
    clusterIdOf: (request) => capiClusterId(request.namespace, request.clusterName ?? ''),
    log,
    followIntervalMs: 200,
    restartDelayMs: 50,
    ...options,
  });
  test.onTestFinished(() => watcher.stop());
  await watcher.ready;
  return {
    world,
    runtime,
    calls,
    approvals,
    said,
    directoryErrors,
    phases,
    machine,
    statusPath: `/apis/${REQUEST_GROUP}/${REQUEST_VERSION}/namespaces/${CAPI_NAMESPACE}/${REQUEST_PLURAL}/${machine}/status`,
  };
}

interface RequestShape {
  status?: { phase?: string; reasonCode?: string; message?: string; incidentId?: string; completedAt?: string };
}

/**
 * As MachineHealthCheck creates the request; resolves with it once its status is Completed.
 * About 10 s alone (a lab's leader move, etcd's refusal to remove a member just after it, a
 * redelivery); the deadline is set for the suite's load, where 15 s ran out.
 */
async function requestCompleted(t: World, timeoutMs = 45_000): Promise<RequestShape> {
  await requestsIn(t.world.fake.kubeConfig(), CAPI_NAMESPACE).create(t.machine, CAPI_CLUSTER, { reason: MHC_REASON });
  const objects = t.world.fake.kubeConfig().makeApiClient(CustomObjectsApi);
  const completed = waitFor(
    async () => {
      const request = (await objects.getNamespacedCustomObject({ ...coordinates, name: t.machine })) as RequestShape;
      return request.status?.phase === 'AwaitingReplacement' ? request : undefined;
    },
    { timeoutMs, what: 'the request to complete' },
  );
  // Said as it stands at the timeout, not as it stood when the wait began.
  return completed.catch(async (error: unknown) => {
    const stood = (await objects.getNamespacedCustomObject({ ...coordinates, name: t.machine }).catch(() => undefined)) as RequestShape | undefined;
    const requests = t.world.fake.requests.filter((r) => !r.path.includes('/machines') && !r.path.includes('/pods'));
    throw new Error(
      `${String(error)}; phases ${t.phases.join(' → ')}; status ${JSON.stringify(stood?.status)}; said ${JSON.stringify(t.said)}; API requests ${JSON.stringify(requests)}`,
    );
  });
}

/** Exactly one incident, remediated, and one member removed: nothing was reported twice. */
async function expectRemediatedOnce(t: World, request: RequestShape): Promise<void> {
  const incidents = await t.runtime.store.listIncidents({ clusterId: CLUSTER_ID });
  expect(incidents).toHaveLength(1);
  expect(incidents[0]).toMatchObject({ incidentId: request.status?.incidentId, state: 'awaiting-replacement' });
  // The reason is the last approval's, the one the member was removed under (scenario 4).
  expect(t.approvals[0]).toBe('LEADER_MOVED');
  expect(request.status?.reasonCode).toBe(t.approvals.at(-1));
  expect(request.status?.reasonCode).toBe(incidents[0]!.lastDecision?.reason);
  expect(t.calls.removed).toHaveLength(1);
  expect(t.world.fake.requestCount('DELETE', `/machines/${t.machine}`)).toBe(1);
}

describe('kube fake: failNext', () => {
  it('answers the next matching requests with a Status error, or drops the connection, then serves again', async () => {
    const fake = await startKubeApiFake();
    try {
      fake.putSecret('default', 's', { value: 'v' });
      const core = fake.kubeConfig().makeApiClient(CoreV1Api);
      const refused = fake.failNext({ method: 'GET', path: /\/secrets\/s$/, status: 409, message: 'injected conflict', times: 2 });
      const reset = fake.failNext({ method: 'GET', path: /\/secrets\/s$/, status: 'reset' });
      for (let i = 0; i < 2; i += 1) {
        const error: unknown = await core.readNamespacedSecret({ namespace: 'default', name: 's' }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ApiException);
        expect(error).toMatchObject({ code: 409, body: expect.stringContaining('"reason":"Conflict"') });
        expect(JSON.parse((error as ApiException<string>).body)).toEqual({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'injected conflict',
          reason: 'Conflict',
          code: 409,
        });
      }
      await expect(core.readNamespacedSecret({ namespace: 'default', name: 's' })).rejects.toThrow();
      expect((await core.readNamespacedSecret({ namespace: 'default', name: 's' })).data?.value).toBe(Buffer.from('v').toString('base64'));
      expect([refused.fired, reset.fired]).toEqual([2, 1]);
      expect(fake.requests.map((r) => r.injected)).toEqual([409, 409, 'reset', undefined]);
    } finally {
      await fake.stop();
    }
  });
});

describe.concurrent('request watcher: the management API server fails once', { timeout: 120_000 }, () => {
  it('a status write that fails (a dropped connection, then a 500 on the AwaitingReplacement write) is written again: the request ends AwaitingReplacement', async (test) => {
    const t = await setUp(test);
    // The first status write loses its connection; the one saying the member is out (nothing in
    // this world joins a replacement) gets a 500.
    const firstWrite = t.world.fake.failNext({ method: 'PATCH', path: /\/status$/, status: 'reset' });
    const completedWrite = t.world.fake.failNext({
      method: 'PATCH',
      path: /\/status$/,
      body: /"phase":"AwaitingReplacement"/,
      status: 500,
      message: 'etcdserver: request timed out',
    });

    const request = await requestCompleted(t);

    expect([firstWrite.fired, completedWrite.fired]).toEqual([1, 1]);
    const patches = t.world.fake.requests.filter((r) => r.method === 'PATCH' && r.path === t.statusPath);
    // The failed writes, each followed by one that was served; the last write served stands.
    expect(patches[0]?.injected).toBe('reset');
    expect(patches.filter((p) => p.injected === 500)).toHaveLength(1);
    expect(patches.findIndex((p) => p.injected === undefined)).toBe(1);
    expect(patches.at(-1)?.injected).toBeUndefined();
    expect(patches.findLastIndex((p) => p.injected === undefined)).toBeGreaterThan(patches.findIndex((p) => p.injected === 500));
    const warnings = t.said.filter((s) => s.level === 'warn' && s.message.startsWith('request status not written'));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]!.fields.error).toContain('fetch failed (other side closed)');
    expect(warnings[1]!.fields.error).toContain(`EtcdRemediationRequest ${CAPI_NAMESPACE}/${t.machine}`);
    expect(warnings[1]!.fields.error).toContain('HTTP 500: etcdserver: request timed out');
    expect(t.phases.at(-1)).toBe('AwaitingReplacement');
    await expectRemediatedOnce(t, request);
  });

  it('a kubeconfig Secret read that fails once is read again on the next use: the request completes; the error named the Secret', async (test) => {
    const t = await setUp(test);
    const secretRead = t.world.fake.failNext({ method: 'GET', path: new RegExp(`^${SECRET_PATH}$`), status: 500, message: 'etcdserver: leader changed' });

    const request = await requestCompleted(t);

    expect(secretRead.fired).toBe(1);
    const reads = t.world.fake.requests.filter((r) => r.method === 'GET' && r.path === SECRET_PATH);
    // The failed read was not kept: the next use read the Secret again, and that read was served.
    expect(reads[0]?.injected).toBe(500);
    expect(reads.slice(1).length).toBeGreaterThan(0);
    expect(reads.slice(1).every((r) => r.injected === undefined)).toBe(true);
    // What the failed read said: the Secret, and the API server's own words. One report failed
    // once and was delivered again; it did not fail for good, so no handler error was raised.
    expect(t.directoryErrors).toEqual([
      `ClusterAccessError: reading Secret ${CAPI_NAMESPACE}/${kubeconfigSecretName(CAPI_CLUSTER)} failed: HTTP 500: etcdserver: leader changed (the identity needs get on secrets there)`,
    ]);
    expect(t.said.filter((s) => s.level === 'error')).toEqual([]);
    // Meanwhile the request said it was reported and waited for its incident, then followed it.
    expect(t.phases[0]).toBe('Pending');
    await expectRemediatedOnce(t, request);
  });

  it('a Secret that fails every delivery of the report leaves a dead letter; once it reads again, the watcher reports the request again and it completes', async (test) => {
    const t = await setUp(test, { reportAgainMs: 1_000 });
    // Unreadable until cleared: the report's first delivery and both redeliveries fail, and the runtime gives up on it.
    const secretReads = t.world.fake.failNext({
      method: 'GET',
      path: new RegExp(`^${SECRET_PATH}$`),
      status: 500,
      message: 'etcdserver: leader changed',
      times: 1_000,
    });
    const completed = requestCompleted(t, 40_000);
    await waitFor(async () => ((await t.runtime.store.listDeadLetters()).length > 0 ? true : undefined), {
      timeoutMs: 20_000,
      what: 'the report to become a dead letter',
    });
    expect(t.said.filter((s) => s.level === 'error').map((s) => s.message)).toContain('probe-members failed');
    expect(await t.runtime.store.listIncidents({ clusterId: CLUSTER_ID })).toEqual([]);
    secretReads.clear();

    const request = await completed;

    expect(secretReads.fired).toBeGreaterThanOrEqual(3);
    const again = t.said.filter((s) => s.message === 'no incident opened for the request; reporting it again');
    expect(again.length).toBeGreaterThan(0);
    expect(t.phases[0]).toBe('Pending');
    await expectRemediatedOnce(t, request);
  });
});
