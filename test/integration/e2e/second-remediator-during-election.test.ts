// Two remediators of one cut leader, each with its own state file: the second reports it right
// after the first removed it, while the rest elect a new leader. Reading the removal record then
// fails ("no leader", "leader changed"); a failed read is a retry, not "no record", so the second
// ends as DUPLICATE_INCIDENT (another remediator removed it), never TARGET_NOT_FOUND.
import { describe, expect, it } from 'vitest';
import { startLab } from '../../../infra/lab/lab.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { labPerTest, startPipeline, type Pipeline } from './pipeline.ts';

describe.sequential('a second remediator during the election the first removal caused', () => {
  const t = labPerTest();
  const other: { pipeline?: Pipeline } = {};

  it('closes DUPLICATE_INCIDENT, naming the first incident, and removes nothing', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    await lab.fault(leader.name, 'cut');
    const a = (t.pipeline = await startPipeline(lab, { policy: { graceMs: 1_000 } }));
    const b = (other.pipeline = await startPipeline(lab, { policy: { graceMs: 1_000 } }));
    try {
      const first = a.remediate(leader.name, 60_000);
      // The moment the member is out of the list, before the rest have a leader again.
      await waitFor(async () => ((await lab.memberList(2_000)).some((m) => m.id === leader.id) ? undefined : true), {
        timeoutMs: 60_000,
        intervalMs: 5,
        what: `${leader.name} to leave the member list`,
      });
      const second = await b.remediate(leader.name, 60_000);
      const removed = await first;

      expect(removed.detailType, JSON.stringify(removed.detail).slice(0, 800)).toBe('RemediationCompleted');
      expect(second.detailType, JSON.stringify(second.detail).slice(0, 800)).toBe('RemediationClosed');
      const detail = second.detail as { reason: string; message: string };
      expect(detail.reason).toBe('DUPLICATE_INCIDENT');
      expect(detail.message).toContain(`was removed by incident ${removed.detail.incidentId}`);
      expect(b.calls.memberRemove).toEqual([]);
      expect(a.calls.removed).toEqual([leader.id]);
    } finally {
      await other.pipeline?.close();
      delete other.pipeline;
    }
  }, 120_000);
});
