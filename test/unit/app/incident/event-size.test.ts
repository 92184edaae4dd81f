// How large MembersProbed and what follows it grow, at the worst the limits allow: clusters whose
// every path fails with messages far past their limits (worst-case-view.ts), probed ten times,
// through the real probe-members and move-leader over the real SQLite store.
import { afterEach, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../../events/catalogue.ts';
import { parseEvent } from '../../../../events/validate.ts';
import { entrySize, MAX_ENTRY_BYTES, toEntry } from '../../../../functions/adapters/aws/eventbridge-entries.ts';
import { moveLeader } from '../../../../functions/app/move/move-leader.ts';
import { probeMembers } from '../../../support/probe-members.ts';
import { MAX_EVIDENCE_BYTES, MAX_MESSAGE_CHARS } from '../../../../functions/core/common/said-limits.ts';
import { MAX_HISTORY_BYTES, MAX_INCIDENT_VIEWS, viewBytes } from '../../../../functions/core/view/view-history.ts';
import { VIEW_LIMITS } from '../../../../functions/core/common/view-limits.ts';
import { worstSample } from '../../../support/worst-case-view.ts';
import { sample } from '../../core/fixtures.ts';
import { harness, unhealthy, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const KIB = 1024;
/** Member 0 of worstSample: the leader every member names. */
const TARGET = 'f000000000000001';
const sizeOf = (event: EventEnvelope): number => entrySize(toEntry(event, 'etcd-remediator'));
const probedEvents = (): EventEnvelope[] => h.events.filter((e) => e.detailType === 'MembersProbed');

/** Ten probes of one incident, a second apart, each at a new attempt as a retry makes it. */
async function tenProbes(size: number): Promise<string> {
  h.setSample((at) => worstSample(size, at));
  const at = new Date(h.clock.now()).toISOString();
  const report = { clusterId: h.cluster.clusterId, attempt: 0, at, target: { memberId: TARGET }, reason: 'test', source: 'test', observedAt: at };
  const opened = await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: report });
  if (opened.kind !== 'probed') throw new Error(`expected a probe, got ${opened.kind}`);
  const { incidentId } = opened.incident;
  for (let attempt = 1; attempt < MAX_INCIDENT_VIEWS; attempt++) {
    h.clock.advance(1_000);
    const incident = (await h.deps.store.getIncident(incidentId))!;
    await h.deps.store.updateIncident(incidentId, { attempt }, { expectVersion: incident.version, now: h.clock.now() });
    const retry = { incidentId, clusterId: h.cluster.clusterId, attempt, at: new Date(h.clock.now()).toISOString(), reason: 'LEADER_UNREACHABLE' as const };
    await probeMembers(h.deps, { detailType: 'RetryDue', detail: retry });
  }
  return incidentId;
}

/** Every event published so far is one its consumers take: within the schema's limits. */
function expectAllValid(): void {
  for (const event of h.events) {
    const parsed = parseEvent(event.detailType, event.detail);
    expect(parsed.ok ? 'valid' : parsed.error.summary, event.detailType).toBe('valid');
  }
}

describe('MembersProbed carries the new view only, and stays small', () => {
  it('7 members at their largest, ten probes: each MembersProbed under 64 KiB, each within its schema', async () => {
    h = harness();
    // The longest cluster name the schema takes: it travels in every event.
    h.cluster.clusterId = 'c'.repeat(253);
    const incidentId = await tenProbes(7);

    const probed = probedEvents();
    expect(probed).toHaveLength(MAX_INCIDENT_VIEWS);
    for (const event of probed) {
      expect(Object.keys(event.detail).sort()).toEqual(['at', 'attempt', 'clusterId', 'incidentId', 'target', 'view']);
      expect(sizeOf(event)).toBeLessThan(64 * KIB);
    }
    expectAllValid();
    // The incident keeps the views move-leader reads: the newest is the one the last event carried.
    const incident = (await h.deps.store.getIncident(incidentId))!;
    expect(incident.views.at(-1)).toEqual((probed.at(-1)!.detail as { view: unknown }).view);
    expect(incident.views.length).toBeGreaterThanOrEqual(2);
    expect(incident.views.reduce((sum, v) => sum + viewBytes(v), 0)).toBeLessThanOrEqual(MAX_HISTORY_BYTES);
  });

  it(`${VIEW_LIMITS.members} members, the most a view holds: under EventBridge's entry limit, with room to spare`, async () => {
    h = harness();
    await tenProbes(VIEW_LIMITS.members);
    const largest = Math.max(...probedEvents().map(sizeOf));
    expect(largest).toBeLessThan(MAX_ENTRY_BYTES / 2);
    expectAllValid();
  });

  it(`${VIEW_LIMITS.members + 1} members: blocked CLUSTER_TOO_LARGE, and no view is published or kept`, async () => {
    h = harness();
    h.setSample((at) => worstSample(VIEW_LIMITS.members + 1, at));
    const at = new Date(h.clock.now()).toISOString();
    const opened = await probeMembers(h.deps, {
      detailType: 'MemberUnhealthy',
      detail: { clusterId: 'c1', attempt: 0, at, target: { memberId: TARGET }, reason: 'test', source: 'test', observedAt: at },
    });
    if (opened.kind !== 'probed') throw new Error(`expected a probe, got ${opened.kind}`);

    expect(probedEvents()).toEqual([]);
    const blocked = h.lastOf('RemediationBlocked');
    expect(blocked.reason).toBe('CLUSTER_TOO_LARGE');
    expect(blocked.message).toContain(`lists ${VIEW_LIMITS.members + 1} members, more than the ${VIEW_LIMITS.members} a view holds`);
    expect((await h.deps.store.getIncident(opened.incident.incidentId))?.views).toEqual([]);
    expectAllValid();
  });

  it('the decision on the largest view says no more than its schema takes: a message naming every member is cut, evidence bounded', async () => {
    h = harness();
    const incidentId = await tenProbes(7);
    await moveLeader(h.deps, h.lastOf('MembersProbed'));

    const decided = h.events.filter((e) => e.detailType !== 'MembersProbed');
    expect(decided.length).toBeGreaterThan(0);
    expectAllValid();
    const incident = (await h.deps.store.getIncident(incidentId))!;
    expect(incident.lastDecision?.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(Buffer.byteLength(JSON.stringify(incident.lastDecision?.evidence))).toBeLessThanOrEqual(MAX_EVIDENCE_BYTES);
  });
});

describe('move-leader reads the earlier views from the incident', () => {
  it('a leader cut on every path is removed without a move once two probes a grace window apart say so; a late MembersProbed decides nothing, a repeated one nothing more', async () => {
    h = harness({ graceMs: 2_000 });
    // etcd-0 leads, and no path reaches it; the followers keep naming it leader at one term.
    h.setSample((at) =>
      sample(at, [
        { i: 0, paths: 'refused' },
        { i: 1, leader: 0 },
        { i: 2, leader: 0 },
      ]),
    );
    const opened = await probeMembers(h.deps, { detailType: 'MemberUnhealthy', detail: unhealthy('etcd-0') });
    if (opened.kind !== 'probed') throw new Error(`expected a probe, got ${opened.kind}`);
    const first = h.lastOf('MembersProbed');
    expect((await moveLeader(h.deps, first))?.reason).toBe('LEADER_UNREACHABLE_UNCONFIRMED');

    h.clock.advance(3_000);
    const { incidentId } = opened.incident;
    const incident = (await h.deps.store.getIncident(incidentId))!;
    await h.deps.store.updateIncident(incidentId, { attempt: 1 }, { expectVersion: incident.version, now: h.clock.now() });
    await probeMembers(h.deps, {
      detailType: 'RetryDue',
      detail: { incidentId, clusterId: 'c1', attempt: 1, at: new Date(h.clock.now()).toISOString(), reason: 'LEADER_UNREACHABLE' },
    });
    const second = h.lastOf('MembersProbed');
    expect(second.view.at).toBe(h.clock.now());

    // The first, delivered again after the incident moved on: stale, nothing decided.
    expect(await moveLeader(h.deps, first)).toBeUndefined();
    // The second carries one view; the sample three seconds before it is the incident's.
    expect((await moveLeader(h.deps, second))?.reason).toBe('LEADER_UNREACHABLE_PAST_GRACE');
    expect(await moveLeader(h.deps, second)).toBeUndefined();
    expect(h.events.filter((e) => e.detailType === 'RemediationApproved')).toHaveLength(1);
    expect(h.calls.moveLeader).toEqual([]);
  });
});
