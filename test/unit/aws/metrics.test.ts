// Outcome metrics: counted from the events a step publishes after its commit, written as EMF.
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeEvent, type DetailType, type EventEnvelope } from '../../../events/catalogue.ts';
import { commit, flushLeftOutbox, flushOutbox } from '../../../functions/app/common/step.ts';
import type { Bus } from '../../../functions/ports/bus.ts';
import type { IncidentStore } from '../../../functions/ports/incident-store.ts';
import { meteredBus, meteredDeadLetters, powertoolsSink, type MetricSink } from '../../../functions/lambda/metered-bus.ts';
import { outcomeMetrics, type MetricPoint } from '../../../functions/lambda/outcome-metrics.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { loadSample } from '../events/samples.ts';
import { tempDir } from '../runtime/helpers.ts';

const event = <T extends DetailType>(type: T): EventEnvelope => makeEvent(type, loadSample(type)) as EventEnvelope;
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

afterEach(() => vi.restoreAllMocks());

describe('outcomeMetrics', () => {
  const completed = loadSample('RemediationCompleted');
  it.each<{ type: DetailType; points: MetricPoint[] }>([
    {
      type: 'RemediationBlocked',
      points: [
        { name: 'RemediationBlocked', unit: 'Count', value: 1 },
        { name: 'RemediationBlocked', unit: 'Count', value: 1, dimensions: { reason: 'QUORUM_AT_RISK' } },
      ],
    },
    { type: 'RemediationFailed', points: [{ name: 'RemediationFailed', unit: 'Count', value: 1 }] },
    { type: 'RetryRequested', points: [{ name: 'RetryRequested', unit: 'Count', value: 1, dimensions: { reason: 'LEADER_UNREACHABLE' } }] },
    { type: 'LeaderMoved', points: [{ name: 'LeaderMoved', unit: 'Count', value: 1 }] },
    { type: 'MemberUnhealthy', points: [] },
    { type: 'RemediationApproved', points: [] },
    { type: 'RetryDue', points: [] },
    {
      type: 'HygieneMoveEnded',
      points: [
        { name: 'HygieneMoves', unit: 'Count', value: 1, dimensions: { outcome: 'moved' } },
        { name: 'HygieneMoveDuration', unit: 'Milliseconds', value: 180 },
      ],
    },
    { type: 'LeaderHygieneAlert', points: [{ name: 'HygieneAlerts', unit: 'Count', value: 1, dimensions: { reason: 'HYGIENE_SHARED_DEGRADATION' } }] },
    { type: 'LeaderDegraded', points: [] },
    { type: 'HygieneCheckDue', points: [] },
  ])('$type', ({ type, points }) => expect(outcomeMetrics(event(type))).toEqual(points));

  it.each([
    { phase: 'started' as const, name: 'HygieneAlerts' },
    { phase: 'ended' as const, name: 'HygieneAlertsEnded' },
  ])("LeaderHygieneAlert $phase: counted as $name, by the hold's reason", ({ phase, name }) => {
    const said = makeEvent('LeaderHygieneAlert', { ...loadSample('LeaderHygieneAlert'), phase, reason: 'HYGIENE_NO_TARGET' });
    expect(outcomeMetrics(said)).toEqual([{ name, unit: 'Count', value: 1, dimensions: { reason: 'HYGIENE_NO_TARGET' } }]);
  });

  it.each(['failed', 'expired', 'superseded', 'would-move'] as const)(
    'HygieneMoveEnded %s: a move counted by its outcome, with no duration even when MoveLeader was timed',
    (outcome) => {
      const ended = makeEvent('HygieneMoveEnded', { ...loadSample('HygieneMoveEnded'), outcome, tookMs: 2_000 });
      expect(outcomeMetrics(ended)).toEqual([{ name: 'HygieneMoves', unit: 'Count', value: 1, dimensions: { outcome } }]);
    },
  );

  it('HygieneMoveEnded moved without tookMs: counted, no duration', () => {
    const { tookMs: _tookMs, ...untimed } = loadSample('HygieneMoveEnded');
    expect(outcomeMetrics(makeEvent('HygieneMoveEnded', untimed))).toEqual([
      { name: 'HygieneMoves', unit: 'Count', value: 1, dimensions: { outcome: 'moved' } },
    ]);
  });

  it('MaintenanceEnded: the run counted by outcome and reason, and each journaled step timed by its kind and outcome; what is not a step is skipped', () => {
    const sampled = loadSample('MaintenanceEnded');
    expect(outcomeMetrics(event('MaintenanceEnded'))).toEqual([
      { name: 'MaintenanceRuns', unit: 'Count', value: 1, dimensions: { outcome: 'done', reason: 'MAINTENANCE_NOT_NEEDED' } },
      ...(sampled.evidence.steps as { key: string; tookMs: number; outcome: string }[]).map((step) => ({
        name: 'MaintenanceStepDuration',
        unit: 'Milliseconds',
        value: step.tookMs,
        dimensions: { step: step.key.split(':')[0], outcome: step.outcome },
      })),
    ]);
    const odd = makeEvent('MaintenanceEnded', {
      ...sampled,
      outcome: 'failed',
      evidence: { steps: [{ key: 'defragment:a1', tookMs: 'soon', outcome: 'done' }, 'x'] },
    });
    expect(outcomeMetrics(odd)).toEqual([
      { name: 'MaintenanceRuns', unit: 'Count', value: 1, dimensions: { outcome: 'failed', reason: 'MAINTENANCE_NOT_NEEDED' } },
    ]);
  });

  it('MembersProbed: one probe latency for each member and path the view holds, answered or not', () => {
    const points = outcomeMetrics(event('MembersProbed'));
    const view = loadSample('MembersProbed').view;
    expect(points).toHaveLength(view.members.reduce((n, m) => n + m.paths.length, 0));
    expect(points[0]).toEqual({
      name: 'ProbeLatency',
      unit: 'Milliseconds',
      value: view.members[0]!.paths[0]!.latencyMs,
      dimensions: {
        cluster: 'prod-eu-1',
        member: view.members[0]!.name,
        path: view.members[0]!.paths[0]!.path,
        reachability: view.members[0]!.paths[0]!.reachability,
      },
    });
  });

  it.each(['FLEET_STORM', 'PAUSED', 'REMOVALS_IN_FLIGHT'])('RetryRequested %s: a retry, and a remediation deferred by fleet safety', (reason) => {
    const deferred = makeEvent('RetryRequested', { ...loadSample('RetryRequested'), reason: reason as 'PAUSED' });
    expect(outcomeMetrics(deferred)).toEqual([
      { name: 'RetryRequested', unit: 'Count', value: 1, dimensions: { reason } },
      { name: 'RemediationDeferred', unit: 'Count', value: 1, dimensions: { reason } },
    ]);
  });

  it('RemediationCompleted: counted, and the time from the incident opening to the completion', () => {
    const openedAt = Date.parse(completed.at) - 65_300;
    expect(outcomeMetrics(event('RemediationCompleted'), openedAt)).toEqual([
      { name: 'RemediationCompleted', unit: 'Count', value: 1 },
      { name: 'TimeToRemediate', unit: 'Milliseconds', value: 65_300 },
    ]);
    expect(outcomeMetrics(event('RemediationCompleted'))).toEqual([{ name: 'RemediationCompleted', unit: 'Count', value: 1 }]);
  });
});

describe('meteredBus', () => {
  const recording = () => {
    const points: { point: MetricPoint; incidentId: string }[] = [];
    const sink: MetricSink = (point, incidentId) => points.push({ point, incidentId });
    return { points, sink };
  };

  it('counts the events of a cleared outbox, with the time to remediate from the store; a publish alone counts nothing', async () => {
    const dir = tempDir();
    const store = openSqliteStore({ path: dir.file('state.sqlite') });
    try {
      const at = Date.parse(loadSample('RemediationCompleted').at);
      const { incident } = await store.openOrJoin({
        clusterId: 'prod-eu-1',
        targetKey: 'memberName=a',
        target: { memberName: 'a' },
        reason: 'r',
        now: at - 4_000,
      });
      const published: EventEnvelope[] = [];
      const { points, sink } = recording();
      const bus = meteredBus(
        { publish: async (...events) => void published.push(...events) },
        { sink, log: silent, openedAt: async (id) => (await store.getIncident(id))?.openedAt },
      );
      const completed = makeEvent('RemediationCompleted', { ...loadSample('RemediationCompleted'), incidentId: incident.incidentId });
      await bus.publish(completed, event('LeaderMoved'));
      expect(published).toHaveLength(2);
      expect(points).toEqual([]);
      await bus.settled?.([completed, event('LeaderMoved')]);
      expect(points).toEqual([
        { point: { name: 'RemediationCompleted', unit: 'Count', value: 1 }, incidentId: incident.incidentId },
        { point: { name: 'TimeToRemediate', unit: 'Milliseconds', value: 4_000 }, incidentId: incident.incidentId },
        { point: { name: 'LeaderMoved', unit: 'Count', value: 1 }, incidentId: loadSample('LeaderMoved').incidentId },
      ]);
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it('counts nothing when the publish fails: the step will be retried', async () => {
    const { points, sink } = recording();
    const bus = meteredBus({ publish: async () => Promise.reject(new Error('PutEvents failed')) }, { sink, log: silent, openedAt: async () => undefined });
    await expect(bus.publish(event('RemediationBlocked'))).rejects.toThrow('PutEvents failed');
    expect(points).toEqual([]);
  });

  it('a metric that cannot be recorded is logged and fails nothing', async () => {
    const warn = vi.fn();
    const bus = meteredBus(
      { publish: async () => undefined },
      { sink: () => undefined, log: { ...silent, warn }, openedAt: async () => Promise.reject(new Error('table unreachable')) },
    );
    await expect(bus.settled?.([event('RemediationCompleted')])).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      'metric not recorded',
      expect.objectContaining({ detailType: 'RemediationCompleted', error: 'Error: table unreachable' }),
    );
  });
});

describe('powertoolsSink', () => {
  it('writes one EMF line a point: namespace, service, the reason as a dimension, the incident id as metadata', () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const sink = powertoolsSink(new Metrics({ namespace: 'EtcdRemediator', serviceName: 'remediate' }));
    sink({ name: 'RemediationBlocked', unit: 'Count', value: 1, dimensions: { reason: 'NO_QUORUM' } }, 'inc-1');
    sink({ name: 'TimeToRemediate', unit: 'Milliseconds', value: 1234 }, 'inc-1');
    sink(
      { name: 'ProbeLatency', unit: 'Milliseconds', value: 7, dimensions: { cluster: 'prod', member: 'cp-a', path: 'direct', reachability: 'ok' } },
      'inc-1',
    );
    vi.restoreAllMocks();
    const emf = lines
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown> & { _aws: { CloudWatchMetrics: unknown[] } });
    expect(emf).toHaveLength(3);
    expect(emf[0]).toMatchObject({
      _aws: {
        CloudWatchMetrics: [{ Namespace: 'EtcdRemediator', Dimensions: [['service', 'reason']], Metrics: [{ Name: 'RemediationBlocked', Unit: 'Count' }] }],
      },
      service: 'remediate',
      reason: 'NO_QUORUM',
      incidentId: 'inc-1',
      RemediationBlocked: 1,
    });
    expect(emf[1]).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Dimensions: [['service']], Metrics: [{ Name: 'TimeToRemediate', Unit: 'Milliseconds' }] }] },
      TimeToRemediate: 1234,
    });
    // Only the table's dimensions are CloudWatch's (each combination a metric billed); the member is metadata.
    expect(emf[2]).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Dimensions: [['service', 'path']], Metrics: [{ Name: 'ProbeLatency', Unit: 'Milliseconds' }] }] },
      path: 'direct',
      member: 'cp-a',
      cluster: 'prod',
      ProbeLatency: 7,
    });
  });
});

describe('meteredDeadLetters', () => {
  it('counts a dead letter once it is kept, by its source; the store answers as before', async () => {
    const dir = tempDir();
    const store = openSqliteStore({ path: dir.file('state.sqlite') });
    try {
      const points: MetricPoint[] = [];
      const metered = meteredDeadLetters(store, (point) => void points.push(point), silent);
      const dead = await metered.putDeadLetter({ receivedAt: 1, source: 'http', detailType: 'MemberUnhealthy', payload: '{}', error: 'clusterId: required' });
      expect(points).toEqual([{ name: 'DeadLetter', unit: 'Count', value: 1, dimensions: { source: 'http' } }]);
      expect((await metered.listDeadLetters()).map((d) => d.id)).toEqual([dead.id]);
    } finally {
      await store.close();
      dir.remove();
    }
  });
});

describe('a left-over outbox', () => {
  const recording = () => {
    const points: MetricPoint[] = [];
    return { points, sink: ((point) => void points.push(point)) satisfies MetricSink };
  };

  /** An incident whose commit left a RemediationBlocked in its outbox, and deps over a metered bus. */
  async function blockedInOutbox(inner: Bus) {
    const dir = tempDir();
    const store = openSqliteStore({ path: dir.file('state.sqlite') });
    const { points, sink } = recording();
    const bus = meteredBus(inner, { sink, log: silent, openedAt: async () => undefined });
    const deps = {
      store,
      bus,
      clock: { now: () => Date.parse(loadSample('RemediationBlocked').at) },
      scheduler: { schedule: async () => undefined, cancel: async () => undefined },
    };
    const { incident } = await store.openOrJoin({
      clusterId: 'prod-eu-1',
      targetKey: 'memberName=a',
      target: { memberName: 'a' },
      reason: 'r',
      now: deps.clock.now(),
    });
    const blocked = makeEvent('RemediationBlocked', { ...loadSample('RemediationBlocked'), incidentId: incident.incidentId }) as EventEnvelope;
    const committed = await commit(deps, incident, {}, [{ kind: 'publish', event: blocked }]);
    const close = async () => {
      await store.close();
      dir.remove();
    };
    return { deps, store, committed, points, close };
  }

  /** The store, but every write goes to `updateIncident`. */
  const withUpdate = (store: IncidentStore, updateIncident: IncidentStore['updateIncident']): IncidentStore =>
    new Proxy(store, {
      get: (target, key) => {
        if (key === 'updateIncident') return updateIncident;
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });

  const blockedCount = (points: MetricPoint[]) => points.filter((p) => p.name === 'RemediationBlocked' && !p.dimensions).length;

  it('published, then its clearing lost (the process died): carried out again, the block counts once', async () => {
    const published: EventEnvelope[] = [];
    const { deps, store, committed, points, close } = await blockedInOutbox({ publish: async (...events) => void published.push(...events) });
    try {
      const dying = { ...deps, store: withUpdate(store, async () => Promise.reject(new Error('the process died before its outbox was cleared'))) };
      await expect(flushOutbox(dying, committed)).rejects.toThrow('died');
      const left = (await store.getIncident(committed.incidentId))!;
      expect(left.outbox).toHaveLength(1);
      // The next delivery carries out what it finds.
      const cleared = await flushLeftOutbox(deps, left);
      expect(cleared.outbox).toEqual([]);
      expect(published.map((e) => e.detailType)).toEqual(['RemediationBlocked', 'RemediationBlocked']);
      expect(blockedCount(points)).toBe(1);
    } finally {
      await close();
    }
  });

  it('its publish refused, then carried out by the next delivery: the block counts then, once', async () => {
    let refuse = true;
    const { deps, store, committed, points, close } = await blockedInOutbox({
      publish: async () => {
        if (refuse) throw new Error('PutEvents failed');
      },
    });
    try {
      await expect(flushOutbox(deps, committed)).rejects.toThrow('PutEvents failed');
      expect(blockedCount(points)).toBe(0);
      refuse = false;
      await flushLeftOutbox(deps, (await store.getIncident(committed.incidentId))!);
      expect(blockedCount(points)).toBe(1);
    } finally {
      await close();
    }
  });
});
