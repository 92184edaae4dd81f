// A request left Blocked starves its MachineHealthCheck's other Machines: MHC's patchUnhealthyTargets
// returns at the first unhealthy Machine that already has a request (cluster-api ae7ff047), so a
// Machine that turns unhealthy later gets none. The simulated MHC (test/support/capi-sim/mhc.ts)
// over five control-plane Machines with maxUnhealthy 2 shows it; with the watcher, the Blocked
// Machine is annotated skip-remediation, MHC goes on with the others, the Blocked request stays for
// a person, and removing the annotation reports it again. No etcd: the incidents are written into a
// real store as the steps write them.
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { SKIP_REMEDIATION_ANNOTATION } from '../../../functions/adapters/kube/cluster-api/machine-skip.ts';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { Decision } from '../../../functions/core/common/index.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startRequestWatcher } from '../../../infra/kubernetes/request-watcher.ts';
import { MACHINES, MHCS, annotationsOf } from '../../support/capi-sim/capi-objects.ts';
import { mhcRound } from '../../support/capi-sim/mhc.ts';
import { simContext, type TimelineEntry } from '../../support/capi-sim/sim-context.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { namespacedClusterId, reportsToStore, tempStore } from './store-reports.ts';
import { tearDownAfterEach } from './teardown.ts';

const teardown = tearDownAfterEach();
const REQUESTS = resourceType(REQUEST_GROUP, REQUEST_PLURAL)!;
const TEMPLATES = resourceType(REQUEST_GROUP, 'etcdremediationrequesttemplates')!;
const blocked: Decision = { kind: 'block', reason: 'QUORUM_AT_RISK', message: 'removing cp-1 would leave too few healthy members', evidence: {} };

/** Five control-plane Machines, an MHC with our template and maxUnhealthy 2, the MHC controller running every 50 ms. */
async function world(): Promise<{ fake: KubeApiFake; rounds: () => number; requests: () => string[] }> {
  const fake = await startKubeApiFake({ nodeMonitorGracePeriodMs: 100 });
  teardown.push(() => fake.stop());
  for (let i = 1; i <= 5; i += 1)
    fake.addControlPlaneNode({ name: `cp-${i}`, internalIp: `10.0.0.${10 + i}`, machine: { name: `wl-cp-${i}`, namespace: 'default', clusterName: 'wl' } });
  fake.store.put(TEMPLATES, {
    apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`,
    kind: 'EtcdRemediationRequestTemplate',
    metadata: { name: 'etcd-remediator', namespace: 'default' },
    spec: { template: { spec: { reason: 'Node not Ready' } } },
  });
  fake.store.put(MHCS, {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'MachineHealthCheck',
    metadata: { name: 'wl-control-plane', namespace: 'default' },
    spec: {
      clusterName: 'wl',
      selector: { matchLabels: { 'cluster.x-k8s.io/control-plane': '' } },
      unhealthyConditions: [{ type: 'Ready', status: 'Unknown', timeout: '0s' }],
      maxUnhealthy: 2,
      remediationTemplate: { apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`, kind: 'EtcdRemediationRequestTemplate', name: 'etcd-remediator' },
    },
  });
  const timeline: TimelineEntry[] = [];
  const sim = simContext(fake, timeline);
  let rounds = 0;
  const timer = setInterval(() => {
    mhcRound(sim, { requestResource: { group: REQUEST_GROUP, plural: REQUEST_PLURAL } });
    rounds += 1;
  }, 50);
  teardown.push(async () => clearInterval(timer));
  return {
    fake,
    rounds: () => rounds,
    requests: () =>
      fake.store
        .list(REQUESTS, 'default', null)
        .map((r) => String((r.metadata as { name: string }).name))
        .sort(),
  };
}

const roundsPass = async (rounds: () => number, n: number) => {
  const from = rounds();
  await waitFor(async () => (rounds() >= from + n ? true : undefined), { timeoutMs: 10_000, what: `${n} MHC rounds` });
};

describe('a request left Blocked and its MachineHealthCheck’s other Machines', () => {
  it('alone (no watcher): the Machine that turns unhealthy later never gets a request', async () => {
    const w = await world();
    w.fake.kubeletDown('cp-1');
    await waitFor(async () => (w.requests().includes('wl-cp-1') ? true : undefined), { timeoutMs: 5_000, what: 'the first request' });
    w.fake.kubeletDown('cp-3');
    await roundsPass(w.rounds, 20);
    expect(w.requests()).toEqual(['wl-cp-1']);
  });

  it('with the watcher: the Blocked Machine annotated skip-remediation, the other gets its request, the Blocked one stays; removing the annotation reports it again', async () => {
    const w = await world();
    const store = tempStore('mhc-starvation-', teardown);
    const { sink, reported } = reportsToStore(store);
    const said: string[] = [];
    const record = (message: string) => void said.push(message);
    const watcher = startRequestWatcher({
      management: w.fake.kubeConfig(),
      runtime: sink,
      clusterIdOf: namespacedClusterId,
      log: { debug: record, info: record, warn: record, error: record },
      followIntervalMs: 100,
      releaseLookMs: 500,
    });
    teardown.push(() => watcher.stop());
    await watcher.ready;

    w.fake.kubeletDown('cp-1');
    await waitFor(async () => (reported.includes('wl-cp-1') ? true : undefined), { timeoutMs: 5_000, what: 'wl-cp-1 reported' });
    const [incident] = await store.listIncidents({ clusterId: 'default/wl' });
    await store.updateIncident(
      incident!.incidentId,
      { state: 'blocked', lastDecision: blocked, result: blocked },
      { expectVersion: incident!.version, now: Date.now() },
    );
    const machine = () => w.fake.store.get(MACHINES, 'default', 'wl-cp-1');
    await waitFor(async () => annotationsOf(machine())[SKIP_REMEDIATION_ANNOTATION], { timeoutMs: 5_000, what: 'the Blocked Machine annotated' });
    expect(annotationsOf(machine())[SKIP_REMEDIATION_ANNOTATION]).toBe(
      `etcd-remediator: QUORUM_AT_RISK (incident ${incident!.incidentId}); remove this annotation to have the Machine remediated again`,
    );

    w.fake.kubeletDown('cp-3');
    await waitFor(async () => (reported.includes('wl-cp-3') ? true : undefined), { timeoutMs: 5_000, what: 'wl-cp-3 reported' });
    expect(w.requests()).toEqual(['wl-cp-1', 'wl-cp-3']);
    const stays = w.fake.store.get(REQUESTS, 'default', 'wl-cp-1');
    expect(stays.status).toMatchObject({ phase: 'Blocked', reasonCode: 'QUORUM_AT_RISK' });

    // Its Machine is read for the annotation's removal once every releaseLookMs, not every round.
    const reads = () => w.fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/machines/wl-cp-1')).length;
    const before = reads();
    const windowStart = Date.now();
    await sleep(1_500);
    const rounds = Math.ceil((Date.now() - windowStart) / 100);
    expect(reads() - before, `Machine reads in ${rounds} follow rounds`).toBeLessThanOrEqual(Math.ceil((Date.now() - windowStart) / 500) + 1);

    // A person fixed the cause and removes the annotation: reported again, a new incident.
    const current = machine();
    const { [SKIP_REMEDIATION_ANNOTATION]: _gone, ...rest } = annotationsOf(current);
    w.fake.store.put(MACHINES, { ...current, metadata: { ...(current.metadata as object), annotations: rest } });
    await waitFor(async () => (reported.filter((m) => m === 'wl-cp-1').length === 2 ? true : undefined), { timeoutMs: 5_000, what: 'wl-cp-1 reported again' });
    expect(said).toContain(`${SKIP_REMEDIATION_ANNOTATION} removed from the Machine of a request that ended for a person to act; reporting it again`);
  });
});
