// Two operators at a shell, each with a state file of their own, each remediating one follower of
// a healthy 3-member cluster at the same moment: one removal, the other refused, never 3 → 1.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli } from './support.ts';

describe('two operators, two state files', () => {
  let lab: Lab;
  let dir: string;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-two-operators-'));
  });
  afterAll(async () => {
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('one follower each, at once: exactly one is removed, the other exits 3 naming why, 2 members are left', async () => {
    const leader = await lab.leader();
    const followers = lab.members.filter((m) => m.id !== leader.id);
    const common = ['--endpoints', lab.endpoints().join(','), '--election-timeout', '500ms', '--timeout', '1s', '--backoff', '300ms', '--json'];
    const runs = await Promise.all(
      followers.map((f, i) => runCli(['remediate', ...common, '--target', f.name, '--state', path.join(dir, `operator-${i}.sqlite`)], { timeoutMs: 60_000 })),
    );

    const results = runs.map((r) => ({ code: r.code, ...jsonOf<{ outcome: string; reason: string; message: string }>(r) }));
    expect(results.map((r) => r.outcome).sort(), JSON.stringify(results)).toEqual(['awaiting-replacement', 'blocked']);
    const refused = results.find((r) => r.outcome === 'blocked')!;
    expect(refused.code).toBe(3);
    expect(['REPLACEMENT_PENDING', 'QUORUM_AT_RISK']).toContain(refused.reason);
    expect((await lab.memberList()).length).toBe(2);
  }, 90_000);
});
