// What MachineHealthCheck means by a request, and only that: while Cluster API has stopped acting
// on the Machine (its Cluster paused by spec.paused or the cluster.x-k8s.io/paused annotation, as
// `clusterctl move` does, or its MachineHealthCheck short-circuited with RemediationAllowed False)
// the watcher reports nothing, says so in the request's status, and reports once it is allowed
// again. Objects are put in the FAKE API server as Cluster API writes them; the runtime is a stand-in
// whose report opens an incident in a real store.
import { describe, expect, it } from 'vitest';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import type { Decision } from '../../../functions/core/common/decision.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import type { Log } from '../../../functions/ports/log.ts';
import { startRequestWatcher, type RequestWatcherOptions } from '../../../infra/kubernetes/request-watcher.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import type { JsonObject } from '../../support/fakes/kube/patch.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { MHC_REASON, requestsIn, type Requests, type StatusSeen } from './remediation-requests.ts';
import { namespacedClusterId, reportsToStore, tempStore } from './store-reports.ts';
import { tearDownAfterEach } from './teardown.ts';

const NS = 'default';
const CLUSTER = 'wl';
const MACHINE = 'wl-cp-1';
const CLUSTERS = resourceType('cluster.x-k8s.io', 'clusters')!;
const MACHINES = resourceType('cluster.x-k8s.io', 'machines')!;
const REQUESTS = resourceType(REQUEST_GROUP, REQUEST_PLURAL)!;

interface World {
  fake: KubeApiFake;
  store: SqliteIncidentStore;
  /** The Machines reported, in order. */
  reported: string[];
  said: { level: keyof Log; message: string; fields: Record<string, unknown> }[];
  /** Moves the watcher's clock on, for the re-report of a recovered request. */
  advance(ms: number): void;
  requests: Requests;
  /** GETs of the Cluster so far: one per look the watcher takes. */
  clusterReads(): number;
  /** PATCHes of the request's status so far. */
  statusWrites(): number;
}

const teardown = tearDownAfterEach();

/** A v1beta1 Cluster as Cluster API stores it; `paused` is its spec.paused. */
const clusterV1beta1 = (paused: boolean): JsonObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'Cluster',
  metadata: { name: CLUSTER, namespace: NS },
  spec: {
    paused,
    controlPlaneRef: { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1', kind: 'KubeadmControlPlane', name: `${CLUSTER}-control-plane`, namespace: NS },
    infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'DockerCluster', name: CLUSTER, namespace: NS },
  },
  status: { phase: 'Provisioned', controlPlaneReady: true, infrastructureReady: true },
});

/** A v1beta2 Cluster, paused (or not) by the cluster.x-k8s.io/paused annotation only. */
const clusterV1beta2 = (annotated: boolean): JsonObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: { name: CLUSTER, namespace: NS, ...(annotated ? { annotations: { 'cluster.x-k8s.io/paused': '' } } : {}) },
  spec: {
    controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane', name: `${CLUSTER}-control-plane` },
    infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'DockerCluster', name: CLUSTER },
  },
  status: {
    phase: 'Provisioned',
    conditions: [
      { type: 'Paused', status: annotated ? 'True' : 'False', reason: annotated ? 'Paused' : 'NotPaused', lastTransitionTime: '2026-07-01T10:00:00Z' },
    ],
  },
});

const SHORT_CIRCUITED =
  'Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy (total: 3, unhealthy: 2, maxUnhealthy: 1)';

/** A v1beta2 MachineHealthCheck of the control plane, its RemediationAllowed as MHC last set it. */
function healthCheck(name: string, allowed: boolean, matchLabels: Record<string, string> = { 'cluster.x-k8s.io/control-plane': '' }): JsonObject {
  const condition: JsonObject = allowed
    ? { type: 'RemediationAllowed', status: 'True', reason: 'RemediationAllowed', observedGeneration: 1, lastTransitionTime: '2026-07-01T10:00:00Z' }
    : {
        type: 'RemediationAllowed',
        status: 'False',
        reason: 'TooManyUnhealthy',
        message: SHORT_CIRCUITED,
        observedGeneration: 1,
        lastTransitionTime: '2026-07-01T10:05:00Z',
      };
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineHealthCheck',
    metadata: { name, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
    spec: {
      clusterName: CLUSTER,
      selector: { matchLabels },
      checks: { unhealthyNodeConditions: [{ type: 'Ready', status: 'Unknown', timeoutSeconds: 300 }] },
      remediation: {
        triggerIf: { unhealthyLessThanOrEqualTo: 1 },
        templateRef: { apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`, kind: 'EtcdRemediationRequestTemplate', name: 'etcd-remediator' },
      },
    },
    status: {
      conditions: [condition, { type: 'Paused', status: 'False', reason: 'NotPaused', observedGeneration: 1, lastTransitionTime: '2026-07-01T10:00:00Z' }],
      expectedMachines: 3,
      currentHealthy: allowed ? 2 : 1,
      remediationsAllowed: allowed ? 1 : 0,
      observedGeneration: 1,
      targets: ['wl-cp-1', 'wl-cp-2', 'wl-cp-3'],
      // v1beta1's own Condition type: a severity, no observedGeneration.
      deprecated: {
        v1beta1: {
          conditions: [
            allowed
              ? { type: 'RemediationAllowed', status: 'True', lastTransitionTime: '2026-07-01T10:00:00Z' }
              : {
                  type: 'RemediationAllowed',
                  status: 'False',
                  severity: 'Warning',
                  reason: 'TooManyUnhealthy',
                  message: SHORT_CIRCUITED,
                  lastTransitionTime: '2026-07-01T10:05:00Z',
                },
          ],
        },
      },
    },
  };
}

async function setUp(options: Partial<Pick<RequestWatcherOptions, 'recheckRecoveredMs' | 'clusterApiVersion' | 'coexistenceScanMs'>> = {}): Promise<World> {
  const fake = await startKubeApiFake();
  teardown.push(() => fake.stop());
  const store = tempStore('watcher-paused-', teardown);
  fake.store.put(MACHINES, {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    metadata: { name: MACHINE, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER, 'cluster.x-k8s.io/control-plane': '' } },
    spec: { clusterName: CLUSTER, bootstrap: { dataSecretName: `${MACHINE}-bootstrap` } },
    status: { nodeRef: { apiVersion: 'v1', kind: 'Node', name: 'cp-1' }, phase: 'Running' },
  });
  const said: World['said'] = [];
  const record =
    (level: keyof Log) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void said.push({ level, message, fields });
  let offset = 0;
  const { sink, reported } = reportsToStore(store, { clock: { now: () => Date.now() + offset } });
  const watcher = startRequestWatcher({
    management: fake.kubeConfig(),
    runtime: sink,
    clusterIdOf: namespacedClusterId,
    log: { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') },
    followIntervalMs: 100,
    restartDelayMs: 20,
    ...options,
  });
  teardown.push(() => watcher.stop());
  await watcher.ready;
  const clusterPath = `/apis/cluster.x-k8s.io/${options.clusterApiVersion ?? 'v1beta1'}/namespaces/${NS}/clusters/${CLUSTER}`;
  const statusPath = `/apis/${REQUEST_GROUP}/${REQUEST_VERSION}/namespaces/${NS}/${REQUEST_PLURAL}/${MACHINE}/status`;
  return {
    fake,
    store,
    reported,
    said,
    advance: (ms) => void (offset += ms),
    requests: requestsIn(fake.kubeConfig(), NS),
    clusterReads: () => fake.requests.filter((r) => r.method === 'GET' && r.path === clusterPath).length,
    statusWrites: () => fake.requests.filter((r) => r.method === 'PATCH' && r.path === statusPath).length,
  };
}

/** As MachineHealthCheck creates it (GenerateTemplate): named after the Machine, owned by it, labelled with its Cluster. */
async function createRequest(t: World): Promise<void> {
  const machineUid = String((t.fake.store.get(MACHINES, NS, MACHINE).metadata as { uid: string }).uid);
  await t.requests.create(MACHINE, CLUSTER, {
    reason: MHC_REASON,
    annotations: {
      'cluster.x-k8s.io/cloned-from-name': 'etcd-remediator',
      'cluster.x-k8s.io/cloned-from-groupkind': 'EtcdRemediationRequestTemplate.etcd-remediator.io',
    },
    ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: MACHINE, uid: machineUid }],
  });
}

const statusWith = (t: World, wanted: (s: StatusSeen) => boolean, what: string): Promise<StatusSeen> =>
  t.requests.statusWith(MACHINE, wanted, what, { intervalMs: 25 });

/** The watcher looked at the Cluster `rounds` more times: that many follow rounds went by. */
async function roundsPass(t: World, rounds: number): Promise<void> {
  const from = t.clusterReads();
  await waitFor(async () => (t.clusterReads() >= from + rounds ? true : undefined), {
    timeoutMs: 10_000,
    intervalMs: 20,
    what: `${rounds} more looks at the Cluster`,
  });
}

const MHCS = (): NonNullable<ReturnType<typeof resourceType>> => {
  const type = resourceType('cluster.x-k8s.io', 'machinehealthchecks');
  if (!type) throw new Error('the fake API server serves no machinehealthchecks');
  return type;
};

describe('a request Cluster API has stopped acting on is not reported', () => {
  it('Cluster spec.paused: Pending CLUSTER_PAUSED, naming the Cluster and what to do; reported once unpaused, and only then', async () => {
    const t = await setUp();
    t.fake.store.put(CLUSTERS, clusterV1beta1(true));
    await createRequest(t);

    const held = await statusWith(t, (s) => s.reasonCode === 'CLUSTER_PAUSED', 'the request to be held');
    expect(held.phase).toBe('Pending');
    expect(held.message).toContain(`Cluster ${NS}/${CLUSTER}`);
    expect(held.message).toContain('spec.paused');
    expect(held.message).toMatch(/reported once/);
    expect(held.incidentId).toBeUndefined();
    // By level: a hold that goes on is recomputed each round, and written no more.
    const writes = t.statusWrites();
    await roundsPass(t, 3);
    expect(t.reported).toEqual([]);
    expect(t.statusWrites()).toBe(writes);

    t.fake.store.put(CLUSTERS, clusterV1beta1(false));
    const followed = await statusWith(t, (s) => s.incidentId !== undefined, 'the request to be reported and followed');
    expect(t.reported).toEqual([MACHINE]);
    expect(followed.reasonCode).not.toBe('CLUSTER_PAUSED');
  });

  it('a status someone else overwrote (kubectl edit --subresource status) is written back as the hold has it, once', async () => {
    const t = await setUp();
    t.fake.store.put(CLUSTERS, clusterV1beta1(true));
    await createRequest(t);
    const held = await statusWith(t, (s) => s.reasonCode === 'CLUSTER_PAUSED', 'the request to be held');

    const stored = t.fake.store.get(REQUESTS, NS, MACHINE);
    t.fake.store.put(REQUESTS, { ...stored, status: { ...(stored.status as JsonObject), phase: 'Completed', message: 'edited by hand' } });
    const back = await statusWith(t, (s) => s.phase === 'Pending' && s.message === held.message, 'the hold written back');
    expect(back.reasonCode).toBe('CLUSTER_PAUSED');
    const writes = t.statusWrites();
    await roundsPass(t, 3);
    expect(t.statusWrites()).toBe(writes);
    expect(t.reported).toEqual([]);
  });

  it('the cluster.x-k8s.io/paused annotation on a v1beta2 Cluster (clusterctl move) holds it the same way', async () => {
    const t = await setUp({ clusterApiVersion: 'v1beta2' });
    t.fake.store.put(CLUSTERS, clusterV1beta2(true));
    await createRequest(t);

    const held = await statusWith(t, (s) => s.reasonCode === 'CLUSTER_PAUSED', 'the request to be held');
    expect(held.phase).toBe('Pending');
    expect(held.message).toContain('cluster.x-k8s.io/paused');
    await roundsPass(t, 2);
    expect(t.reported).toEqual([]);

    t.fake.store.put(CLUSTERS, clusterV1beta2(false));
    await statusWith(t, (s) => s.incidentId !== undefined, 'the request to be reported');
    expect(t.reported).toEqual([MACHINE]);
  });

  it('its MachineHealthCheck short-circuits (RemediationAllowed False, TooManyUnhealthy): Pending REMEDIATION_NOT_ALLOWED in its words; another MHC, of other Machines, does not count', async () => {
    const t = await setUp();
    t.fake.store.put(CLUSTERS, clusterV1beta1(false));
    t.fake.store.put(MHCS(), healthCheck('wl-control-plane', false));
    t.fake.store.put(MHCS(), healthCheck('wl-workers', false, { 'cluster.x-k8s.io/deployment-name': 'wl-md-0' }));
    await createRequest(t);

    const held = await statusWith(t, (s) => s.reasonCode === 'REMEDIATION_NOT_ALLOWED', 'the request to be held');
    expect(held.phase).toBe('Pending');
    expect(held.message).toContain(`MachineHealthCheck ${NS}/wl-control-plane`);
    expect(held.message).toContain(SHORT_CIRCUITED);
    expect(held.message).not.toContain('wl-workers');
    await roundsPass(t, 3);
    expect(t.reported).toEqual([]);

    t.fake.store.put(MHCS(), healthCheck('wl-control-plane', true));
    await statusWith(t, (s) => s.incidentId !== undefined, 'the request to be reported');
    expect(t.reported).toEqual([MACHINE]);
  });

  it('a second MachineHealthCheck of the same Machine without our template (the one ClusterClass generates): Pending COMPETING_REMEDIATION naming it; reported once it carries our template', async () => {
    const t = await setUp();
    t.fake.store.put(CLUSTERS, clusterV1beta1(false));
    t.fake.store.put(MHCS(), healthCheck('wl-control-plane', true));
    // As the topology controller generates it: owned by the Cluster, labelled, and no template (KCP remediates).
    const generated = healthCheck('wl-cp-mhc-8fk2x', true);
    const spec = generated.spec as JsonObject;
    t.fake.store.put(MHCS(), {
      ...generated,
      metadata: { ...(generated.metadata as JsonObject), labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER, 'topology.cluster.x-k8s.io/owned': '' } },
      spec: { ...spec, remediation: { triggerIf: { unhealthyLessThanOrEqualTo: 1 } } },
    });
    await createRequest(t);

    const held = await statusWith(t, (s) => s.reasonCode === 'COMPETING_REMEDIATION', 'the request to be held');
    expect(held.phase).toBe('Pending');
    expect(held.message).toContain(`MachineHealthCheck ${NS}/wl-cp-mhc-8fk2x also selects Machine ${NS}/${MACHINE} and has no remediation template`);
    expect(held.message).toContain("generated from the Cluster's ClusterClass");
    expect(held.message).not.toContain('wl-control-plane');
    await roundsPass(t, 3);
    expect(t.reported).toEqual([]);

    t.fake.store.put(MHCS(), {
      ...generated,
      metadata: { ...(generated.metadata as JsonObject), labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER, 'topology.cluster.x-k8s.io/owned': '' } },
    });
    await statusWith(t, (s) => s.incidentId !== undefined, 'the request to be reported');
    expect(t.reported).toEqual([MACHINE]);
  });

  it('that second MachineHealthCheck is found before any request: said once as a Warning Event on it, naming the Machine, over scan after scan; said again once it comes back', async () => {
    const t = await setUp({ coexistenceScanMs: 100 });
    const EVENTS = resourceType('', 'events')!;
    const competing = () => t.fake.store.list(EVENTS, NS, null).filter((e) => e.reason === 'CompetingRemediation');
    const scans = () => t.fake.requests.filter((r) => r.method === 'GET' && r.path === '/apis/cluster.x-k8s.io/v1beta1/machinehealthchecks').length;
    const scansPass = async (n: number) => {
      const from = scans();
      await waitFor(async () => (scans() >= from + n ? true : undefined), { timeoutMs: 10_000, intervalMs: 20, what: `${n} more scans` });
    };
    t.fake.store.put(MHCS(), healthCheck('wl-control-plane', true));
    // Of the workers only: it competes for no Machine of ours.
    const workers = healthCheck('wl-workers', true, { 'cluster.x-k8s.io/deployment-name': 'wl-md-0' });
    t.fake.store.put(MHCS(), { ...workers, spec: { ...(workers.spec as JsonObject), remediation: {} } });
    await scansPass(2);
    expect(competing()).toEqual([]);

    const generated = healthCheck('wl-cp-mhc-8fk2x', true);
    const generatedLabels = { 'cluster.x-k8s.io/cluster-name': CLUSTER, 'topology.cluster.x-k8s.io/owned': '' };
    t.fake.store.put(MHCS(), {
      ...generated,
      metadata: { ...(generated.metadata as JsonObject), labels: generatedLabels },
      spec: { ...(generated.spec as JsonObject), remediation: { triggerIf: { unhealthyLessThanOrEqualTo: 1 } } },
    });
    const [event] = await waitFor(async () => (competing().length > 0 ? competing() : undefined), { timeoutMs: 10_000, what: 'a CompetingRemediation Event' });
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { kind: 'MachineHealthCheck', name: 'wl-cp-mhc-8fk2x', namespace: NS } });
    expect(event!.message).toContain(`MachineHealthCheck ${NS}/wl-cp-mhc-8fk2x selects Machine ${MACHINE}, which wl-control-plane hands to etcd-remediator`);
    expect(event!.message).toContain('KubeadmControlPlane remediates it itself');
    expect(event!.message).toContain("generated from the Cluster's ClusterClass");
    expect(t.said.filter((s) => s.message === 'a MachineHealthCheck competes with etcd-remediator')).toHaveLength(1);
    // Scan after scan, the same finding is not said again: one Event, one count, one log line.
    await scansPass(3);
    expect(competing()).toHaveLength(1);
    expect(competing()[0]!.count).toBe(1);
    expect(t.said.filter((s) => s.message === 'a MachineHealthCheck competes with etcd-remediator')).toHaveLength(1);

    // Given our template it competes no more; taken back, it is said again.
    t.fake.store.put(MHCS(), { ...generated, metadata: { ...(generated.metadata as JsonObject), labels: generatedLabels } });
    await scansPass(2);
    t.fake.store.put(MHCS(), {
      ...generated,
      metadata: { ...(generated.metadata as JsonObject), labels: generatedLabels },
      spec: { ...(generated.spec as JsonObject), remediation: { triggerIf: { unhealthyLessThanOrEqualTo: 1 } } },
    });
    await waitFor(async () => (t.said.filter((s) => s.message === 'a MachineHealthCheck competes with etcd-remediator').length === 2 ? true : undefined), {
      timeoutMs: 10_000,
      what: 'the finding said again',
    });
  });

  it('a scan the watcher may not make (403 on the MachineHealthCheck list) is said once, naming the permission; the next scan that reads finds the competitor', async () => {
    const t = await setUp({ coexistenceScanMs: 100 });
    const denied = t.fake.failNext({
      method: 'GET',
      path: /^\/apis\/cluster\.x-k8s\.io\/v1beta1\/machinehealthchecks$/,
      status: 403,
      message: 'forbidden',
      times: 1_000,
    });
    t.fake.store.put(MHCS(), healthCheck('wl-control-plane', true));
    const rival = healthCheck('wl-kcp', true);
    t.fake.store.put(MHCS(), { ...rival, spec: { ...(rival.spec as JsonObject), remediation: {} } });
    await waitFor(async () => (denied.fired >= 3 ? true : undefined), { timeoutMs: 10_000, what: 'three refused scans' });
    const notLooked = t.said.filter((s) => s.message.startsWith('competing MachineHealthChecks not looked for'));
    expect(notLooked.map((s) => s.message)).toEqual(['competing MachineHealthChecks not looked for: the MachineHealthChecks could not be listed']);
    expect(notLooked[0]!.fields.needs).toBe('list on machinehealthchecks.cluster.x-k8s.io in every namespace (infra/kubernetes/deploy/rbac.yaml)');
    denied.clear();
    await waitFor(async () => (t.said.some((s) => s.message === 'a MachineHealthCheck competes with etcd-remediator') ? true : undefined), {
      timeoutMs: 10_000,
      what: 'the competitor found once the list reads',
    });
  });

  it('a recovered request is not reported again while its Cluster is paused; once unpaused, it is', async () => {
    const t = await setUp({ recheckRecoveredMs: 60_000 });
    t.fake.store.put(CLUSTERS, clusterV1beta1(false));
    await createRequest(t);
    const first = await statusWith(t, (s) => s.incidentId !== undefined, 'the request to be reported');
    const recovered: Decision = { kind: 'close', reason: 'TARGET_RECOVERED', message: 'cp-1 answered again, healthy', evidence: {} };
    const incident = (await t.store.getIncident(first.incidentId!))!;
    await t.store.updateIncident(
      incident.incidentId,
      { state: 'closed', lastDecision: recovered, result: recovered },
      { expectVersion: incident.version, now: Date.now() },
    );
    await statusWith(t, (s) => s.phase === 'Recovered', 'the request to show Recovered');

    t.fake.store.put(CLUSTERS, clusterV1beta1(true));
    // Past the recheck: MHC still has the request, but MHC itself does nothing while paused.
    t.advance(120_000);
    const held = await statusWith(t, (s) => s.reasonCode === 'CLUSTER_PAUSED', 'the re-report to be held');
    expect(held.phase).toBe('Pending');
    await roundsPass(t, 3);
    expect(t.reported).toEqual([MACHINE]);

    t.fake.store.put(CLUSTERS, clusterV1beta1(false));
    await waitFor(async () => (t.reported.length === 2 ? true : undefined), { timeoutMs: 10_000, what: 'the request to be reported again' });
    const again = await statusWith(t, (s) => s.incidentId !== undefined && s.incidentId !== first.incidentId, 'the new incident to be followed');
    expect(again.phase).not.toBe('Recovered');
  });

  it('an incident under way when the Cluster is paused stops before any removal (closed CLUSTER_PAUSED); reported again once unpaused', async () => {
    const t = await setUp();
    t.fake.store.put(CLUSTERS, clusterV1beta1(false));
    await createRequest(t);
    const first = await statusWith(t, (s) => s.incidentId !== undefined, 'the request to be reported');

    t.fake.store.put(CLUSTERS, clusterV1beta1(true));
    const held = await statusWith(t, (s) => s.reasonCode === 'CLUSTER_PAUSED', 'the request to be held');
    expect(held.phase).toBe('Pending');
    const stopped = await t.store.getIncident(first.incidentId!);
    expect(stopped).toMatchObject({ state: 'closed', lastDecision: { kind: 'close', reason: 'CLUSTER_PAUSED' } });
    expect(stopped?.lastDecision?.message).toMatch(/nothing was removed/);
    await roundsPass(t, 3);
    expect(t.reported).toEqual([MACHINE]);

    t.fake.store.put(CLUSTERS, clusterV1beta1(false));
    await statusWith(
      t,
      (s) => s.incidentId !== undefined && s.incidentId !== first.incidentId && s.reasonCode !== 'CLUSTER_PAUSED',
      'the request to be reported again',
    );
    expect(t.reported).toEqual([MACHINE, MACHINE]);
  });

  it('a removal already approved when the Cluster is paused finishes: its incident is not stopped, and the log says why', async () => {
    const t = await setUp();
    t.fake.store.put(CLUSTERS, clusterV1beta1(false));
    await createRequest(t);
    const first = await statusWith(t, (s) => s.incidentId !== undefined, 'the request to be reported');
    const approved: Decision = { kind: 'approve', reason: 'TARGET_IS_FOLLOWER', leaderMove: 'not-needed', message: 'cp-1 is a follower', evidence: {} };
    const incident = (await t.store.getIncident(first.incidentId!))!;
    await t.store.updateIncident(incident.incidentId, { lastDecision: approved }, { expectVersion: incident.version, now: Date.now() });

    t.fake.store.put(CLUSTERS, clusterV1beta1(true));
    await waitFor(async () => (t.said.some((s) => s.level === 'warn' && /paused/.test(s.message) && /finishes/.test(s.message)) ? true : undefined), {
      timeoutMs: 10_000,
      what: 'the watcher to say the removal finishes',
    });
    await roundsPass(t, 3);
    expect((await t.store.getIncident(first.incidentId!))?.state).toBe('open');
    expect(t.reported).toEqual([MACHINE]);
  });

  it('what cannot be read is no answer: an unreadable MachineHealthCheck list holds the request, saying so; it is reported once it reads', async () => {
    const t = await setUp();
    t.fake.store.put(CLUSTERS, clusterV1beta1(false));
    const refused = t.fake.failNext({
      method: 'GET',
      path: /\/machinehealthchecks$/,
      status: 403,
      times: 3,
      message:
        'machinehealthchecks.cluster.x-k8s.io is forbidden: User "system:serviceaccount:etcd-remediator-system:etcd-remediator" cannot list resource "machinehealthchecks"',
    });
    await createRequest(t);

    const held = await statusWith(t, (s) => s.phase === 'Pending' && /machinehealthchecks/.test(s.message ?? ''), 'the request to be held');
    expect(held.message).toMatch(/forbidden/);
    expect(t.reported).toEqual([]);
    await statusWith(t, (s) => s.incidentId !== undefined, 'the request to be reported once the list reads');
    expect(refused.fired).toBe(3);
    expect(t.reported).toEqual([MACHINE]);
  });
});
