// Reports of one member, by many senders and by name or id: one incident, one removal. Reports
// that arrive after it ended but were observed before are kept on it as late duplicates.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab } from '../../../infra/lab/lab.ts';
import { labPerTest, startPipeline } from './pipeline.ts';

describe.sequential('duplicate reports of one member', () => {
  const t = labPerTest();

  it('100 reports of a healthy follower, by name and by id, some after the end: one incident, one removal', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    const pipeline = (t.pipeline = await startPipeline(lab));
    const observedAt = new Date().toISOString();
    const report = (i: number) =>
      pipeline.runtime.submit({
        clusterId: 'lab',
        // Half by name, half by id: the same member either way.
        target: i % 2 === 0 ? { memberName: follower.name } : { memberId: follower.id },
        reason: `report ${i}`,
        source: `sender-${i}`,
        observedAt,
        at: new Date().toISOString(),
      });

    await Promise.all(Array.from({ length: 50 }, (_, i) => report(i)));
    await waitFor(async () => pipeline.events.find((e) => e.detailType === 'RemediationCompleted'), { timeoutMs: 60_000, what: 'the remediation to complete' });
    // The other half arrives after the end, all observed before it.
    await Promise.all(Array.from({ length: 50 }, (_, i) => report(50 + i)));
    await pipeline.runtime.bus.drain({ timeoutMs: 10_000 });

    // Reports by name and by id that arrive together open at most one incident each before either
    // knows the member; the second to resolve it ends as a duplicate of the first, removing nothing.
    const incidents = await pipeline.runtime.store.listIncidents({ clusterId: 'lab' });
    const remediated = incidents.filter((i) => i.state === 'awaiting-replacement');
    expect(remediated).toHaveLength(1);
    expect(incidents.length).toBeLessThanOrEqual(2);
    for (const other of incidents.filter((i) => i.state !== 'awaiting-replacement')) {
      expect(other).toMatchObject({ state: 'closed', result: { reason: 'DUPLICATE_INCIDENT' } });
    }
    expect(pipeline.calls.removed).toEqual([follower.id]);
    // Every report is accounted for: the openings, the joined, the late.
    const journals = await Promise.all(incidents.map((i) => pipeline.runtime.store.journal(i.incidentId)));
    const steps = journals.flat().map((e) => e.step);
    const count = (step: string) => steps.filter((s) => s === step).length;
    expect(count('incident-opened') + count('duplicate-joined') - (incidents.length - 1) + count('late-duplicate')).toBe(100);
    expect(count('late-duplicate')).toBe(50);
    await waitFor(async () => ((await lab.memberList()).length === 2 ? true : undefined), { timeoutMs: 5_000, what: 'two members left' });
  }, 90_000);
});
