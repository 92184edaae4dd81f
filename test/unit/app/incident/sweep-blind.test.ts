// The sweep where timers cannot be seen (AWS): an open incident unchanged for longer than any wait
// or step of its policy is resumed; a younger one is left to its timer; an unknown cluster is left.
import { afterEach, describe, expect, it } from 'vitest';
import { sweepBlind } from '../../../../functions/app/incident/sweep.ts';
import type { ReasonCode } from '../../../../functions/core/common/reason-table.ts';
import { stallWindowMs } from '../../../../functions/core/budget/step-budget.ts';
import { isScheduledSweep } from '../../../../functions/schedule-retry/sweep-handler.ts';
import { harness, T0, type Harness } from '../harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const open = async (clusterId: string, name: string) =>
  (await h.deps.store.openOrJoin({ clusterId, targetKey: `memberName=${name}`, target: { memberName: name }, reason: 'r', now: h.clock.now() })).incident;

describe('sweepBlind', () => {
  it('resumes only what has been quiet past its cluster policy stall window', async () => {
    h = harness();
    const window = stallWindowMs(h.cluster.policy);
    const stalled = await open('c1', 'etcd-0');
    h.clock.advance(window + 1);
    const fresh = await open('c1', 'etcd-1');
    const elsewhere = await open('gone', 'etcd-2');
    // Writes stamp updatedAt with the store's `now`: make the first incident's last write old.
    expect(stalled.updatedAt).toBe(T0);

    expect(await sweepBlind(h.deps)).toBe(1);

    expect((await h.deps.store.getIncident(stalled.incidentId))?.attempt).toBe(1);
    expect((await h.deps.store.getIncident(fresh.incidentId))?.attempt).toBe(0);
    expect((await h.deps.store.getIncident(elsewhere.incidentId))?.attempt).toBe(0);
    expect(h.scheduled.map((r) => (r.event.detail as { reason: string }).reason)).toEqual(['RUNTIME_RESUMED']);
  });

  it('is what schedule-retry runs for an EventBridge schedule rule event, and only for that', () => {
    expect(isScheduledSweep({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} })).toBe(true);
    expect(isScheduledSweep({ source: 'etcd-remediator', 'detail-type': 'RetryRequested', detail: {} })).toBe(false);
    expect(isScheduledSweep(null)).toBe(false);
  });

  it('ends, rather than resumes, a stalled incident past its deadline, saying what to check', async () => {
    h = harness({ incidentDeadlineMs: 600_000 });
    const stalled = await open('c1', 'etcd-0');
    h.clock.advance(Math.max(600_000, stallWindowMs(h.cluster.policy)) + 1);

    expect(await sweepBlind(h.deps)).toBe(0);

    const ended = await h.deps.store.getIncident(stalled.incidentId);
    expect(ended).toMatchObject({ state: 'blocked', result: { reason: 'INCIDENT_DEADLINE_EXCEEDED' } });
    expect((ended!.result as { message: string }).message).toMatch(
      /made no progress since .* and is past its deadline of 10 min; blocked, nothing more is done: check the dead-letter queues/,
    );
    expect(h.events.map((e) => e.detailType)).toEqual(['RemediationBlocked']);
    expect(h.scheduled).toEqual([]);
  });

  it('checks again an incident awaiting its replacement whose check was lost, as overdue once it said so, and not once the checks ended', async () => {
    h = harness();
    const awaiting = async (name: string, said: ReasonCode[]) => {
      const opened = await open('c1', name);
      for (const reason of said)
        await h.deps.store.appendJournal(opened.incidentId, { at: h.clock.now(), step: 'replacement-checked', detail: { reason, message: reason } });
      return h.deps.store.updateIncident(opened.incidentId, { state: 'awaiting-replacement' }, { expectVersion: opened.version, now: h.clock.now() });
    };
    const lost = await awaiting('etcd-0', ['REPLACEMENT_AWAITED']);
    const overdue = await awaiting('etcd-1', ['REPLACEMENT_AWAITED', 'REPLACEMENT_OVERDUE']);
    const ended = await awaiting('etcd-2', ['REPLACEMENT_OVERDUE', 'REPLACEMENT_CHECKS_ENDED']);
    expect(await sweepBlind(h.deps)).toBe(0);
    h.clock.advance(stallWindowMs(h.cluster.policy) + 1);

    expect(await sweepBlind(h.deps)).toBe(2);

    const checks = h.scheduled.map((r) => ({
      incidentId: (r.event.detail as { incidentId: string }).incidentId,
      reason: (r.event.detail as { reason: string }).reason,
      type: r.event.detailType,
    }));
    expect(checks).toHaveLength(2);
    expect(checks).toEqual(
      expect.arrayContaining([
        { incidentId: lost.incidentId, reason: 'REPLACEMENT_AWAITED', type: 'RetryDue' },
        { incidentId: overdue.incidentId, reason: 'REPLACEMENT_OVERDUE', type: 'RetryDue' },
      ]),
    );
    expect(await h.deps.store.getIncident(lost.incidentId)).toMatchObject({ state: 'awaiting-replacement', attempt: lost.attempt + 1 });
    expect((await h.deps.store.getIncident(ended.incidentId))?.attempt).toBe(ended.attempt);
  });
});
