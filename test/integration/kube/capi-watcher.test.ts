// The seed problem with the watcher, in the simulated Cluster API (test/support/capi-sim): the
// etcd leader's machine goes sick in each of the seed's three forms; MHC hands it to us through its
// template; the watcher reports the request, the incident moves leadership off (or removes the
// leader), removes the member and deletes the Machine; Cluster API's deletion runs (drain skipped
// where the Node cannot stop its pods, KCP's pre-terminate hook finding the member gone), the
// garbage collector deletes the request with its Machine (our finalizer keeps it), KCP scales a
// replacement up, and the request ends Completed, Ready=True as the real kubectl wait reads it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, type TestContext } from 'vitest';
import { isTerminalEvent } from '../../../events/catalogue.ts';
import { REQUEST_FINALIZER } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { EXCLUDE_NODE_DRAINING } from '../../../functions/adapters/kube/cluster-api/machine-actuator.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startRequestWatcher, type RequestWatcherOptions } from '../../../infra/kubernetes/request-watcher.ts';
import { openStatusSource } from '../../../infra/cli/status-source.ts';
import { attentionRank } from '../../../infra/cli/status-table.ts';
import { isLine, journalSteps } from '../../../functions/core/incident/index.ts';
import { MACHINES, annotationsOf, isDeleting, nameOf } from '../../support/capi-sim/capi-objects.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { isObject, text } from '../../support/fakes/kube/patch.ts';
import { newestKubectl } from '../../support/kubectl-bins.ts';
import { startPipeline } from '../e2e/pipeline.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE } from './kube-world.ts';
import { KCP_NAME, startCapiWorld, type CapiWorld } from './capi-world.ts';
import { lanesOf } from './lanes.ts';
import { requestsIn } from './remediation-requests.ts';

const run = promisify(execFile);
const REQUESTS = resourceType('etcd-remediator.io', 'etcdremediationrequests')!;

// Each case removes a member, so each has a world of its own, booted ahead; most of a case is
// waiting (etcd's refusal of reconfiguration after the leader moved, the backoffs, the replacement
// joining), so a case starts beside another once that one's plan is made, two at most, and no
// world boots beside a case's first steps (lanes.ts).
const worlds = lanesOf({ cases: 4, lanes: 2, ahead: 1, beginNow: true, start: () => startCapiWorld({ external: true }), stop: (w: CapiWorld) => w.down() });

const FORMS = [
  { form: 'kubelet stopped', fault: (w: CapiWorld, node: string) => w.world.fake.kubeletDown(node), notReady: 'NodeReadyUnknown' },
  { form: 'Node deleted', fault: (w: CapiWorld, node: string) => w.world.fake.deleteNode(node), notReady: 'NodeDeleted' },
  { form: 'containerd down', fault: (w: CapiWorld, node: string) => w.world.fake.containerdDown(node), notReady: 'NodeNotReady' },
] as const;

/**
 * A capi world with our pipeline on its lab and the watcher on its management side; the watcher's
 * log lines in `said`. `journalFailures`: that many of the watcher's own journal writes fail first.
 */
async function watchedWorld(test: TestContext, watcherOptions: Partial<RequestWatcherOptions> = {}, journalFailures = 0) {
  const { world: w, settled } = await worlds.take(test);
  const pipeline = await startPipeline(w.world.lab, {
    kube: w.world.access,
    endpoints: [],
    policy: { pathOrder: ['port-forward', 'exec-relay'], replacement: { checkEveryMs: 500 } },
    clusterId: CAPI_CLUSTER,
  });
  test.onTestFinished(() => pipeline.close());
  // Approved (or ended): the plan is made, and what is left is the removal and its aftermath.
  pipeline.runtime.bus.subscribe((event) => {
    if (event.detailType === 'RemediationApproved' || isTerminalEvent(event)) settled();
  });
  const said: string[] = [];
  const log = { debug: () => undefined, info: (m: string) => said.push(m), warn: (m: string) => said.push(m), error: (m: string) => said.push(m) };
  const runtime = pipeline.runtime;
  let failing = journalFailures;
  const store = new Proxy(runtime.store, {
    get(target, property) {
      if (property === 'appendJournal' && failing > 0) {
        failing -= 1;
        return () => Promise.reject(new Error('injected: SQLITE_FULL: database or disk is full'));
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const watcher = startRequestWatcher({
    management: w.world.fake.kubeConfig(),
    runtime: {
      ...runtime,
      store,
      clock: systemClock,
      submit: (detail, source) => runtime.submit(detail, source),
      subscribe: (o) => runtime.bus.subscribe(o),
    },
    followIntervalMs: 200,
    clusterIdOf: (request) => request.clusterName ?? '',
    log,
    ...watcherOptions,
  });
  test.onTestFinished(() => watcher.stop());
  await watcher.ready;
  return { w, world: w.world, pipeline, runtime, said };
}

// A case's timeout counts its wait for a lane (up to two cases ahead of it), as in kube-scenarios.
describe.concurrent('the seed cases with the watcher, in the simulated Cluster API', { timeout: 180_000 }, () => {
  for (const { form, fault, notReady } of FORMS) {
    it(`${form} on the leader: removed, its Machine deleted without a hang, the request kept until Completed, the control plane back to three`, async (test) => {
      const { w, world, pipeline, runtime, said } = await watchedWorld(test, { keepEndedMs: 120_000 });
      // What the Machine said of us while it stood, and every annotation it carried.
      const machineSeen: { externallyRemediated: string[]; annotations: Set<string> } = { externallyRemediated: [], annotations: new Set() };
      const leader = await world.lab.leader();
      const machine = world.machineOf(leader);
      world.fake.store.subscribe((change) => {
        if (change.resource !== MACHINES || nameOf(change.object) !== machine) return;
        for (const key of Object.keys(annotationsOf(change.object))) machineSeen.annotations.add(key);
        const v1beta2 = isObject(change.object.status) && isObject(change.object.status.v1beta2) ? change.object.status.v1beta2 : {};
        const condition = (Array.isArray(v1beta2.conditions) ? v1beta2.conditions : []).filter(isObject).find((c) => c.type === 'ExternallyRemediated');
        const word = condition ? `${text(condition.status)}/${text(condition.reason)}` : undefined;
        if (word && machineSeen.externallyRemediated.at(-1) !== word) machineSeen.externallyRemediated.push(word);
      });
      const start = Date.now();
      const decisions: string[] = [];
      runtime.bus.subscribe((event) => {
        if (event.detailType === 'MembersProbed') return;
        const { reason, message } = event.detail as { reason?: string; message?: string };
        decisions.push(`+${Date.now() - start} ms incident: ${event.detailType}${reason ? ` ${reason}: ${(message ?? '').slice(0, 300)}` : ''}`);
      });
      fault(w, leader.name);

      const full = await waitFor(
        async () => {
          const machines = world.fake.store.list(MACHINES, CAPI_NAMESPACE, null);
          const members = await world.lab.memberList();
          const whole = machines.length === 3 && !machines.some((m) => nameOf(m) === machine || isDeleting(m)) && members.length === 3;
          return whole && !members.some((m) => m.isLearner || m.id === leader.id) ? machines : undefined;
        },
        { timeoutMs: 90_000, what: 'the control plane back to three machines and members' },
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${w.sim.describe()}\n${decisions.join('\n')}\n${said.join('\n')}`);
      });
      const fullAt = Date.now() - start;

      // The request outlives its Machine: collected by the garbage collector, held by our finalizer,
      // and Ready=True as kubectl wait reads it, on the API server's own terms.
      const kubeconfigDir = fs.mkdtempSync(path.join(os.tmpdir(), 'capi-watcher-'));
      test.onTestFinished(() => fs.rmSync(kubeconfigDir, { recursive: true, force: true }));
      const kubeconfig = path.join(kubeconfigDir, 'config');
      world.fake.writeKubeconfig(kubeconfig);
      const wait = await run(newestKubectl().bin, [
        '--kubeconfig',
        kubeconfig,
        'wait',
        '--for=condition=Ready',
        `etcdremediationrequest/${machine}`,
        '-n',
        CAPI_NAMESPACE,
        '--timeout=60s',
      ]);
      expect(wait.stdout).toContain(`etcdremediationrequest.etcd-remediator.io/${machine} condition met`);
      const request = world.fake.store.get(REQUESTS, CAPI_NAMESPACE, machine);
      expect(request.metadata).toMatchObject({ finalizers: [REQUEST_FINALIZER], deletionTimestamp: expect.any(String) });
      expect(request.status).toMatchObject({ phase: 'Completed' });
      expect(world.fake.garbageCollector?.collected).toContain(`etcdremediationrequests/${CAPI_NAMESPACE}/${machine}`);
      expect(said.filter((line) => /withdr[ae]w/.test(line))).toEqual([]);
      expect(said).toContain('request deleted by the garbage collector after its Machine, which this incident replaces; kept until its outcome is written');

      // The Machine said what we did while it stood; drain skipped, its Node not Ready (a drain with
      // containerd down would wait for ever: capi-drain.test.ts), and the reason said in the result.
      expect(machineSeen.externallyRemediated[0]).toBe('False/WaitingForRemediation');
      // Ours from then on: False while it runs, True once the member is out (the reason, the last decision's).
      expect(machineSeen.externallyRemediated).toContain('False/Running');
      // True once the member is out, said by the actuator as it deleted the Machine, and left so.
      expect(machineSeen.externallyRemediated.at(-1)).toBe('True/EtcdMemberRemoved');
      expect(machineSeen.annotations.has(EXCLUDE_NODE_DRAINING)).toBe(true);
      expect(w.sim.timeline.some((e) => e.about === machine && e.what.startsWith('Deleting: DrainingNode'))).toBe(false);
      const completed = pipeline.events.find((e) => e.detailType === 'RemediationCompleted');
      expect(JSON.stringify(completed?.detail)).toContain(`drain skipped (${EXCLUDE_NODE_DRAINING}): its Node ${leader.name} is not Ready (${notReady}`);
      expect(pipeline.calls.removed).toEqual([leader.id]);
      expect(full.map(nameOf)).not.toContain(machine);

      const offset = w.sim.startedAt - start;
      const steps = w.sim.timeline
        .filter((e) => e.about === machine || e.what === 'replacement joined')
        .map((e) => ({ at: e.at + offset, line: `+${e.at + offset} ms ${e.about}: ${e.what}` }));
      const lines = [...steps, ...decisions.map((line) => ({ at: Number(/\+(\d+)/.exec(line)![1]), line }))].sort((a, b) => a.at - b.at).map((e) => e.line);
      console.log(`seed case with the watcher, ${form}: back to three in ${fullAt} ms after the fault\n${lines.join('\n')}`);
    });
  }

  it('a replacement KCP holds (a remaining Machine’s components unhealthy, its strict preflight): AwaitingReplacement says so in KCP’s words, and Completed once it comes', async (test) => {
    // The watcher's first journal line of the hold fails (a full disk): written on a later look.
    const { w, world, pipeline, said } = await watchedWorld(test, { replacementLookMs: 200 }, 1);
    const sick = w.sickComponents;
    const leader = await world.lab.leader();
    const machine = world.machineOf(leader);
    const other = world.machineOf(world.lab.members.find((m) => m.id !== leader.id)!);
    sick.add(other);
    world.fake.containerdDown(leader.name);

    const requests = requestsIn(world.fake.kubeConfig(), CAPI_NAMESPACE);
    const held = await requests.statusWith(
      machine,
      (s) => s.phase === 'AwaitingReplacement' && /has not come: .*components/.test(s.message ?? ''),
      'the hold said',
      {
        timeoutMs: 60_000,
      },
    );
    expect(held.message).toContain(
      `The replacement has not come: KubeadmControlPlane ${CAPI_NAMESPACE}/${KCP_NAME} says: Scaling up from 2 to 3 replicas is blocked because: waiting for control plane components to become healthy.`,
    );
    const events = world.fake.store.list(resourceType('', 'events')!, CAPI_NAMESPACE, null).filter((e) => e.reason === 'ReplacementHeld');
    // One Warning each time what holds it changes (first, maybe, the deleting Machine; then the components).
    expect(events.every((e) => e.type === 'Warning')).toBe(true);
    expect(events.some((e) => typeof e.message === 'string' && e.message.includes('waiting for control plane components to become healthy'))).toBe(true);
    // And in the incident, where status reads it: a person sees why the cluster is a member short.
    const status = await openStatusSource({ state: pipeline.statePath });
    test.onTestFinished(() => status.close());
    const entry = await waitFor(async () => (await status.read()).entries.find((e) => e.replacementSaid === 'REPLACEMENT_HELD'), {
      timeoutMs: 20_000,
      what: 'status to say REPLACEMENT_HELD',
    });
    expect(said).toContain('the replacement hold not journaled; written on the next look');
    expect(attentionRank(entry)).toBe(0);
    const heldLines = (await status.store.journal(entry.incident.incidentId)).filter((e) => isLine(e, journalSteps.replacementChecked));
    expect(heldLines.at(-1)?.detail).toMatchObject({
      reason: 'REPLACEMENT_HELD',
      message: expect.stringContaining('waiting for control plane components to become healthy'),
    });

    sick.clear();
    const done = await requests.statusWith(machine, (s) => s.phase === 'Completed', 'Completed once the replacement came', { timeoutMs: 60_000 });
    expect(done.message).not.toContain('has not come');
    expect(w.sim.timeline.some((e) => e.what === 'replacement joined')).toBe(true);
  });
});
