// The fault matrix in `npm test`: the fast rows of the same table `npm run matrix` runs in full
// (cases.ts), each judged by the same harness, and the quorum checker's own rule proven both ways.
import { waitFor } from '../../functions/lib/wait-for.ts';
import { describe, expect, it } from 'vitest';
import { startLab } from '../../infra/lab/lab.ts';
import { judge, startQuorumChecker, type QuorumSample } from '../support/quorum-checker.ts';
import { expectAsPlanned, fastRows, isAwsCase } from './fast-rows.ts';

describe.sequential('fault matrix (fast subset; all cases: npm run matrix)', () => {
  // The AWS rows run in matrix-aws.test.ts, so that the two files share the test workers.
  it.each(fastRows((c) => !isAwsCase(c)))('%s', async (_, c) => expectAsPlanned(c), 90_000);
});

describe('the quorum checker', () => {
  const sample = (at: number, ok: boolean): QuorumSample => ({ at, end: at + 5, member: 'm', ok, ...(ok ? {} : { error: 'deadline exceeded' }) });
  const run = (pattern: string): QuorumSample[] => [...pattern].map((c, i) => sample(i * 100, c === '+'));

  it('tolerates one election (a failure window up to 3 election timeouts) and calls a longer one LOST', () => {
    // 10 failed samples, 1000 ms: one election.
    expect(judge(run('+++----------+++'), [], 1_500).quorum).toBe('held');
    // 20 failed samples, 2000 ms, never healed: lost.
    const lost = judge(run('+++--------------------'), [], 1_500);
    expect(lost.quorum).toBe('LOST');
    expect(lost.summary).toMatch(/quorum lost for \d+ ms via m \(deadline exceeded\) > 1500 ms/);
  });

  it('excuses a window the case injected, but not one that outlasts the injected span by more than the allowance', () => {
    expect(judge(run('+++--------------------+'), [{ from: 300 }], 1_500).quorum).toBe('held');
    expect(judge(run('+++--------------------+'), [{ from: 300, to: 1_000 }], 1_500).quorum).toBe('held');
    expect(judge(run('+++------------------------------+'), [{ from: 300, to: 500 }], 1_500).quorum).toBe('LOST');
    // A window whose first failure ended before the injected span began is not explained by it.
    expect(judge(run('+++--------------------+'), [{ from: 500, to: 2_000 }], 1_500).quorum).toBe('LOST');
    // A sample in flight when the fault struck (started 300, failed at 305) is.
    expect(judge(run('+++--------------------+'), [{ from: 302, to: 2_000 }], 1_500).quorum).toBe('held');
  });

  it('says LOST on a real cluster that loses its quorum with nothing declared', async () => {
    await using lab = await startLab({ members: 3 });
    const leader = await lab.leader();
    const checker = startQuorumChecker({
      members: () => lab.members,
      skip: (name) => lab.runState(name) !== 'running',
      electionTimeoutMs: lab.electionTimeoutMs,
    });
    await waitFor(async () => (checker.samples.filter((x) => x.ok).length >= 5 ? true : undefined), { timeoutMs: 10_000, what: 'five good samples' });
    for (const m of lab.members.filter((x) => x.id !== leader.id)) await lab.kill(m.name);
    // Failing, with nothing declared, for longer than one election's allowance (3 x election timeout).
    const lostSince = Date.now();
    await waitFor(
      async () => {
        const last = checker.samples.at(-1);
        return last && !last.ok && last.at - lostSince > 2 * 3 * lab.electionTimeoutMs ? true : undefined;
      },
      { timeoutMs: 30_000, what: 'the failure window to outgrow the allowance' },
    );
    const verdict = await checker.stop();
    expect(verdict.samples).toBeGreaterThan(5);
    // The surviving leader is asked in that window (a sample through a follower in flight as it died may be too).
    expect(verdict.windows[0]?.members).toContain(leader.name);
    expect(verdict.quorum, verdict.summary).toBe('LOST');
  });
});
