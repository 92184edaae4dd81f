// The Event recorder against the kube fake: a repeat counted on the one Event by a patch, an Event
// gone written anew with its count, the API server's trouble tried again a few times, a refusal
// given up at once and logged, an object's flood of waiting cut by its token bucket, a Node's in
// default; never a throw.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { createEventRecorder, type EventRecorder } from '../../../functions/adapters/kube/cluster-api/object-events.ts';
import type { Log } from '../../../functions/ports/log.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';

const EVENTS = resourceType('', 'events')!;
const machine = { kind: 'Machine', apiVersion: 'cluster.x-k8s.io/v1beta1', namespace: 'capi', name: 'cp-0', uid: 'u-0' };
const approved = { reason: 'LEADER_MOVED', note: 'leadership moved off cp-0: removal approved', type: 'Normal' as const, action: 'Approve' };

let fake: KubeApiFake;
let warnings: string[];
let now: number;

const log: Log = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message) => void warnings.push(message),
  error: (message) => void warnings.push(message),
};
const recorder = (burst = 25): EventRecorder =>
  createEventRecorder({
    core: fake.kubeConfig().makeApiClient(CoreV1Api),
    log,
    clock: { now: () => now },
    instance: 'watch-0',
    firstDelayMs: 5,
    spam: { burst, refillEveryMs: 60_000 },
  });
const stored = () => fake.store.list(EVENTS, 'capi', null);

beforeEach(async () => {
  fake = await startKubeApiFake();
  // The API server refuses objects in a namespace that does not exist (NamespaceLifecycle).
  fake.addNamespace('capi');
  warnings = [];
  now = Date.parse('2026-01-01T00:00:00Z');
});

afterEach(async () => {
  await fake.stop();
});

describe('Event recorder', () => {
  it('writes an Event as client-go does, and counts a repeat on it by a patch', async () => {
    const events = recorder();
    events.record(machine, approved);
    await events.flush();
    now += 30_000;
    events.record(machine, approved);
    await events.flush();
    expect(stored()).toHaveLength(1);
    expect(stored()[0]).toMatchObject({
      involvedObject: { kind: 'Machine', name: 'cp-0', namespace: 'capi', uid: 'u-0' },
      // UpperCamelCase, as Kubernetes' own Event reasons are.
      reason: 'LeaderMoved',
      message: approved.note,
      type: 'Normal',
      action: 'Approve',
      count: 2,
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:00:30Z',
      eventTime: '2026-01-01T00:00:00.000000Z',
      series: { count: 2, lastObservedTime: '2026-01-01T00:00:30.000000Z' },
      source: { component: 'etcd-remediator', host: 'watch-0' },
      reportingComponent: 'etcd-remediator',
      reportingInstance: 'watch-0',
    });
    expect(fake.requestCount('PATCH', `/events/${(stored()[0]!.metadata as { name: string }).name}`)).toBe(1);
    // Another sentence is another Event.
    events.record(machine, { ...approved, note: 'another' });
    await events.flush();
    expect(stored()).toHaveLength(2);
  });

  it("puts a Node's Events in default, the Node being cluster-scoped, as the API server wants them", async () => {
    const events = recorder();
    events.record({ kind: 'Node', apiVersion: 'v1', namespace: '', name: 'cp-0', uid: 'n-0' }, approved);
    await events.flush();
    expect(warnings).toEqual([]);
    const [event] = fake.store.list(EVENTS, 'default', null);
    expect(event).toMatchObject({ metadata: { namespace: 'default' }, involvedObject: { kind: 'Node', name: 'cp-0', uid: 'n-0' } });
    expect((event!.involvedObject as Record<string, unknown>).namespace).toBeUndefined();
  });

  it('writes an Event that is gone anew, its count kept', async () => {
    const events = recorder();
    events.record(machine, approved);
    await events.flush();
    const [first] = stored();
    fake.store.remove(EVENTS, 'capi', (first!.metadata as { name: string }).name);
    events.record(machine, approved);
    await events.flush();
    expect(stored().map((e) => e.count)).toEqual([2]);
    expect(warnings).toEqual([]);
  });

  it("tries again on the server's trouble, a few times, and gives a refusal up at once; never throws", async () => {
    const events = recorder();
    const trouble = fake.failNext({ method: 'POST', path: /\/events$/, status: 500, times: 2 });
    events.record(machine, approved);
    await events.flush();
    expect(trouble.fired).toBe(2);
    expect(stored()).toHaveLength(1);

    const refused = fake.failNext({ method: 'POST', path: /\/events$/, status: 403, times: 5 });
    events.record(machine, { ...approved, note: 'refused' });
    await events.flush();
    expect(refused.fired).toBe(1);
    refused.clear();
    expect(warnings).toEqual(['Kubernetes Event not written; the remediation goes on']);

    const down = fake.failNext({ method: 'POST', path: /\/events$/, status: 'reset', times: 10 });
    events.record(machine, { ...approved, note: 'unreachable' });
    await events.flush();
    expect(down.fired).toBe(3);
    expect(warnings).toHaveLength(2);
  });

  it("drops an object's waiting Events past its burst; other objects', and the decisions that move an incident on, still written", async () => {
    const events = recorder(2);
    const deferred = { reason: 'LEADER_UNREACHABLE', note: '', type: 'Warning' as const, action: 'Defer' };
    for (const note of ['a', 'b', 'c']) events.record(machine, { ...deferred, note });
    events.record({ ...machine, name: 'cp-1', uid: 'u-1' }, { ...deferred, note: 'd' });
    events.record(machine, approved);
    await events.flush();
    expect(
      stored()
        .map((e) => `${(e.involvedObject as { name: string }).name} ${e.message as string}`)
        .sort(),
    ).toEqual(['cp-0 a', 'cp-0 b', `cp-0 ${approved.note}`, 'cp-1 d']);
  });
});
