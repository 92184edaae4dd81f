// Duplicates join the open incident; a crash between steps resumes from the journal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Actuator } from '../../../functions/ports/actuator.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { startPipeline, type Pipeline } from './pipeline.ts';

describe.sequential('idempotency and resume', () => {
  let lab: Lab | undefined;
  const pipelines: Pipeline[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    const closing = lab;
    lab = undefined;
    try {
      await Promise.allSettled(pipelines.splice(0).map((p) => p.close()));
    } finally {
      await closing?.down();
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    }
  });

  it('20 duplicate MemberUnhealthy events at once make exactly one MemberRemove', async () => {
    lab = await startLab({ members: 3 });
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const pipeline = await startPipeline(lab);
    pipelines.push(pipeline);
    const outcome = pipeline.runtime.waitForOutcome({ clusterId: 'lab' }, 45_000);
    const now = new Date().toISOString();
    const detail = { clusterId: 'lab', target: { memberName: follower.name }, reason: 'dup', source: 'test', observedAt: now, at: now };

    await Promise.all(Array.from({ length: 20 }, () => pipeline.runtime.submit(detail)));
    expect((await outcome).detailType).toBe('RemediationCompleted');
    await pipeline.runtime.bus.drain({ timeoutMs: 10_000 });

    // etcd may refuse a removal as "unhealthy cluster" for its first seconds, and we retry; but
    // only one removal was accepted, and nothing was sent after it.
    expect(pipeline.calls.removed).toEqual([follower.id]);
    expect(new Set(pipeline.calls.memberRemove)).toEqual(new Set([follower.id]));
    expect(pipeline.calls.removedAt).toEqual([pipeline.calls.memberRemove.length - 1]);
    expect(await pipeline.runtime.store.listIncidents({ clusterId: 'lab' })).toHaveLength(1);
    expect(pipeline.events.filter((e) => e.detailType === 'RemediationCompleted')).toHaveLength(1);
    const [incident] = await pipeline.runtime.store.listIncidents();
    const joined = (await pipeline.runtime.store.journal(incident!.incidentId)).filter((e) => e.step === 'duplicate-joined');
    expect(joined).toHaveLength(19);
  });

  it('a crash between "member removed" and "actuator called" resumes on the same state file and calls the actuator once', async () => {
    lab = await startLab({ members: 3 });
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resume-'));
    dirs.push(dir);
    const statePath = path.join(dir, 'state.sqlite');

    // The first runtime "dies" inside the actuator: the call never returns.
    let firstCalls = 0;
    const hangs: Actuator = { name: 'hangs', replace: () => ((firstCalls += 1), new Promise(() => undefined)) };
    const first = await startPipeline(lab, { statePath, actuator: hangs });
    void first.remediate(follower.name).catch(() => undefined);
    await waitFor(async () => (firstCalls > 0 ? true : undefined), { timeoutMs: 30_000, what: 'the first actuator call' });
    const [incident] = await first.runtime.store.listIncidents();
    expect(await first.runtime.store.stepDone(incident!.incidentId, 'member-removed')).toBe(true);
    expect(await first.runtime.store.stepDone(incident!.incidentId, 'actuator-called')).toBe(false);
    await first.close();

    const replaced: string[] = [];
    const counting: Actuator = { name: 'counting', replace: async (r) => (replaced.push(r.member.id), { action: 'replaced', detail: 'ok' }) };
    const second = await startPipeline(lab, { statePath, actuator: counting });
    pipelines.push(second);
    const done = await waitFor(async () => second.events.find((e) => e.detailType === 'RemediationCompleted' || e.detailType === 'RemediationBlocked'), {
      timeoutMs: 30_000,
      what: 'the resumed incident to finish',
    });

    expect(done.detailType).toBe('RemediationCompleted');
    expect(replaced).toEqual([follower.id]);
    // The member was removed once, by the first runtime; the second did not remove it again.
    expect(second.calls.memberRemove).toEqual([]);
    expect(first.calls.removed).toEqual([follower.id]);
    expect((await lab.memberList()).map((m) => m.id)).not.toContain(follower.id);
    const steps = (await second.runtime.store.journal(incident!.incidentId)).filter((e) => e.isStepMarker).map((e) => e.step);
    // The snapshot the default policy takes before the removal, once, by the first runtime.
    expect(steps).toEqual(['lock-taken', 'snapshot-taken', 'member-removed', 'leader-elected', 'actuator-called']);
  });
});
