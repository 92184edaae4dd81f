// NOSPACE cleared by maintenance, on real etcd: a 5-member cluster at its quota (a 2 MiB
// --quota-backend-bytes on every member, filled by rewriting a few keys, its history compacted as
// the API server does every 5 minutes) with one follower dead. The dead follower's removal waits
// (NOSPACE_CLEARING) while the maintenance defragments the four live members one at a time, the
// leader last after leadership is moved off it, disarms the alarm and checks a write; then it is
// removed. On 3 members with one dead, defragmenting either survivor would stall the quorum: the
// removal blocks, saying what a person can do, and nothing is defragmented.
import { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { startLab } from '../../../infra/lab/lab.ts';
import { alarmsOf, fillAndCompact, QUOTA_ARGS } from '../../support/fragmented-lab.ts';
import { maintenanceRunOf, reportModel } from '../../../infra/cli/report/report-model.ts';
import { labPerTest, startPipeline } from './pipeline.ts';
import { startedAhead } from './started-ahead.ts';

const quotaLab = (members: number) => startLab({ members, memberArgs: QUOTA_ARGS(members) });

describe.sequential('NOSPACE cleared by maintenance', () => {
  const t = labPerTest();
  const five = startedAhead(
    1,
    () => quotaLab(5),
    (lab) => lab.down(),
    { beginNow: true },
  );
  const three = startedAhead(
    1,
    () => quotaLab(3),
    (lab) => lab.down(),
  );

  it('5 members at their quota, one follower dead: defragmented one at a time, the leader last after a move, disarmed, and the follower removed', async () => {
    const lab = (t.lab = await five.take());
    const leader = await lab.waitForLeader();
    await fillAndCompact(lab);
    const dead = lab.members.find((m) => m.name !== leader.name)!;
    await lab.kill(dead.name);
    const live = lab.members.filter((m) => m.name !== dead.name);
    expect((await alarmsOf(live)).length).toBeGreaterThan(0);

    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { maxAttempts: 60, incidentDeadlineMs: 300_000 } }));
    const outcome = await pipeline.remediate(dead.name, 150_000);
    const said = JSON.stringify(outcome.detail).slice(0, 1_500);
    expect(outcome.detailType, said).toBe('RemediationCompleted');
    expect(pipeline.calls.removed).toEqual([dead.id]);

    // The removal waited on the maintenance, and the maintenance ended before anything was removed.
    const types = pipeline.events.map((e) => e.detailType);
    const waits = pipeline.events.filter((e) => e.detailType === 'RetryRequested' && e.detail.reason === 'NOSPACE_CLEARING');
    expect(waits.length).toBeGreaterThan(0);
    const ended = pipeline.events.filter((e) => e.detailType === 'MaintenanceEnded');
    expect(ended.map((e) => e.detail.outcome)).toContain('done');
    const done = ended.find((e) => e.detail.outcome === 'done')!;
    const steps = (done.detail.evidence.steps as { key: string; outcome: string; at: string; tookMs: number }[]).filter((s) => s.outcome === 'done');
    const keys = steps.map((s) => s.key);
    // Approved only once the alarm was disarmed (the check of a write may run beside the removal: it stalls no member).
    const disarmed = steps.find((s) => s.key === 'disarm')!;
    const approved = pipeline.events.find((e) => e.detailType === 'RemediationApproved')!;
    // (etcd applies the disarm before its answer comes back: a look in between already sees the alarm gone.)
    expect(Date.parse(approved.detail.at)).toBeGreaterThanOrEqual(Date.parse(disarmed.at));
    // Every wait on the alarm came before it (a wait after it is for the lock the check of a write held a moment).
    const lastWait = pipeline.events.findLastIndex((e) => e.detailType === 'RetryRequested' && e.detail.reason === 'NOSPACE_CLEARING');
    expect(lastWait).toBeLessThan(types.indexOf('RemediationApproved'));
    // Every live member once, the leader after a move off it, then the alarm disarmed and a write checked.
    const leaderKey = keys.find((k) => k.startsWith('move-leader:'))!;
    const moved = leaderKey.slice('move-leader:'.length);
    expect(keys.filter((k) => k.startsWith('defragment:')).sort()).toEqual(live.map((m) => `defragment:${m.id}`).sort());
    expect(keys.indexOf(`defragment:${moved}`)).toBe(keys.indexOf(leaderKey) + 1);
    expect(keys.slice(-2)).toEqual(['disarm', 'verify']);

    const firstWait = pipeline.events.find((e) => e.detailType === 'RetryRequested' && e.detail.reason === 'NOSPACE_CLEARING')!;
    const cleared = Date.parse(disarmed.at) + disarmed.tookMs - Date.parse(firstWait.detail.at);
    console.log(
      `NOSPACE on ${live.length} live members: disarmed ${cleared} ms after the removal first waited on it, ${steps.length} steps (${keys.join(', ')})`,
    );

    // Writes are accepted again, and no member keeps the alarm.
    expect(await alarmsOf(live)).toEqual([]);
    const writer = new Etcd3({ hosts: live.map((m) => m.directUrl) });
    try {
      await writer.put('/after-maintenance').value('accepted');
      expect(await writer.get('/after-maintenance').string()).toBe('accepted');
    } finally {
      writer.close();
    }

    // The incident's report draws the run that cleared the alarm it waited on, step by step.
    const { store } = pipeline.runtime;
    const incident = (await store.getIncident(outcome.detail.incidentId))!;
    const run = maintenanceRunOf((await store.maintenanceRecord('lab'))?.record, incident);
    const report = reportModel({ incident, journal: await store.journal(incident.incidentId), ...(run ? { maintenance: run } : {}) });
    expect(report.maintenance).toMatchObject({ state: 'done', runId: done.detail.runId });
    expect(report.bars.filter((b) => b.kind === 'maintenance').map((b) => b.label)).toEqual(
      expect.arrayContaining(live.map((m) => `defragment ${m.name}`).concat('disarm', 'verify')),
    );
  }, 240_000);

  it('3 members at their quota, one dead: no margin to defragment either survivor, so the removal blocks, saying what a person can do, and nothing is defragmented', async () => {
    const lab = (t.lab = await three.take());
    const leader = await lab.waitForLeader();
    await fillAndCompact(lab);
    const dead = lab.members.find((m) => m.name !== leader.name)!;
    await lab.kill(dead.name);

    const pipeline = (t.pipeline = await startPipeline(lab));
    const outcome = await pipeline.remediate(dead.name, 60_000);
    const message = (outcome.detail as { message?: string }).message ?? '';
    expect(outcome.detailType, message).toBe('RemediationBlocked');
    expect((outcome.detail as { reason?: string }).reason).toBe('ETCD_NO_SPACE');
    expect(message).toMatch(/with one member stalled by its defragmentation, 1 of 3 voting members would answer, below the quorum of 2/);
    expect(message).toMatch(/raise --quota-backend-bytes on every member and disarm the alarm/);
    expect(message).not.toMatch(/disaster|snapshot restore/);
    expect(pipeline.events.filter((e) => e.detailType === 'MaintenanceDue')).toEqual([]);
    expect(pipeline.calls.memberRemove).toEqual([]);
  }, 120_000);
});
