// 800 ms of delay on every path, with the default 2 s call deadline: the probe says the network is
// slow, in those words and figures, and the next probe waits longer, until the incident goes on.
import { describe, expect, it } from 'vitest';
import { startLab } from '../../../infra/lab/lab.ts';
import { labPerTest, startPipeline } from './pipeline.ts';

describe.sequential('a slow network', () => {
  const t = labPerTest();

  it('says no member answered within the deadline, doubles it, and remediates a follower once the probe gets through', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.id !== leader.id)!;
    for (const m of lab.members) await lab.fault(m.name, { delayMs: 800 });
    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { callTimeoutMs: 2_000, maxAttempts: 10 } }));

    const outcome = await pipeline.remediate(follower.name, 120_000);

    const slow = pipeline.events.flatMap((e) => (e.detailType === 'RetryRequested' && e.detail.reason === 'CLUSTER_UNREACHABLE' ? [e.detail.message] : []));
    expect(slow.length).toBeGreaterThan(0);
    expect(slow[0]).toMatch(/^No member answered within the deadline of 2 s: all \d+ endpoints timed out .*; the network may be slow: the next probe waits 4 s; raise the call deadline \(--timeout, policy callTimeout\) if it stays so; we look again at /);
    expect(outcome.detailType, JSON.stringify(outcome.detail).slice(0, 800)).toBe('RemediationCompleted');
    expect(pipeline.calls.removed).toEqual([follower.id]);
  }, 150_000);
});
