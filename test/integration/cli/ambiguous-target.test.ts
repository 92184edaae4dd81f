// Two etcd members under one name, as etcd allows (one restarted with another's --name), one of them
// frozen: a name cannot say which to remove, so remediate blocks naming both ids, and the id then
// removes the one meant.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab, type LabMember } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli } from './support.ts';

interface ResultJson {
  outcome: string;
  reason: string;
  message: string;
  target: { memberId: string; name: string };
  evidence: { candidates?: { id: string; name: string; reached: string }[] };
}

// etcd refuses reconfiguration for ~5 s after a member (re)starts ("unhealthy cluster"): a short backoff retries it promptly.
const lab500 = ['--election-timeout', '500ms', '--timeout', '1s', '--backoff', '300ms'];

describe('a member name two members share', () => {
  let lab: Lab;
  let dir: string;
  /** The original holder of the name, frozen with SIGSTOP. */
  let frozen: LabMember;
  /** Another member restarted under the frozen one's name, healthy. */
  let twin: LabMember;
  let shared: string;
  let before: string[];

  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-ambiguous-'));
    const leader = await lab.leader();
    const [first, second] = lab.members.filter((m) => m.id !== leader.id);
    shared = first!.name;
    twin = await lab.restartAs(second!.name, shared);
    frozen = first!;
    lab.stop(frozen.name);
    before = (await lab.memberList()).map((m) => m.id).sort();
  }, 60_000);
  afterAll(async () => {
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const remediate = async (target: string, state: string) => {
    const run = await runCli(
      ['remediate', '--endpoints', lab.endpoints().join(','), '--target', target, ...lab500, '--state', path.join(dir, state), '--json'],
      { timeoutMs: 45_000 },
    );
    return { code: run.code, stderr: run.stderr, result: jsonOf<ResultJson>(run) };
  };

  // Neither blocked command removes anything or takes the cluster lock: they run side by side, and
  // the removal comes after them.
  describe.concurrent('blocked by the name', () => {
    it('the member list holds both under the name', async () => {
      const named = (await lab.memberList())
        .filter((m) => m.name === shared)
        .map((m) => m.id)
        .sort();
      expect(named).toEqual([frozen.id, twin.id].sort());
    });

    it('remediate --target NAME blocks with AMBIGUOUS_TARGET, naming both ids and how each was reached, and removes nothing', async () => {
      const { code, stderr, result } = await remediate(shared, 'by-name.sqlite');

      expect(code, stderr).toBe(3);
      expect(result).toMatchObject({ outcome: 'blocked', reason: 'AMBIGUOUS_TARGET' });
      expect(result.message).toContain(`memberName ${shared} matches 2 etcd members`);
      expect(result.message).toContain(`${shared} (${frozen.id}), which is unreachable on every path (direct ${frozen.clientUrl} timed out)`);
      expect(result.message).toContain(`${shared} (${twin.id}), which answers on direct ${twin.clientUrl}`);
      expect(result.message).toMatch(new RegExp(`--target (${frozen.id}|${twin.id}) or --target (${frozen.id}|${twin.id})`));
      expect(result.evidence.candidates?.map((c) => c.id).sort()).toEqual([frozen.id, twin.id].sort());
      expect(stderr).toMatch(/RemediationBlocked\s+AMBIGUOUS_TARGET/);
      expect((await lab.memberList()).map((m) => m.id).sort()).toEqual(before);
    });

    it('plan --target NAME says the same, touching nothing', async () => {
      const run = await runCli(['plan', '--endpoints', lab.endpoints().join(','), '--target', shared, ...lab500, '--json'], { timeoutMs: 30_000 });

      expect(run.code, run.stderr).toBe(3);
      const result = jsonOf<ResultJson>(run);
      expect(result).toMatchObject({ outcome: 'blocked', reason: 'AMBIGUOUS_TARGET' });
      expect(result.message).toContain(frozen.id);
      expect(result.message).toContain(twin.id);
    });
  });

  it('remediate --target ID then removes exactly the frozen member, the healthy twin kept', async () => {
    const { code, stderr, result } = await remediate(frozen.id, 'by-id.sqlite');

    expect(code, stderr).toBe(6);
    expect(result).toMatchObject({ outcome: 'awaiting-replacement', target: { memberId: frozen.id, name: shared } });
    const after = (await lab.memberList()).map((m) => m.id).sort();
    expect(after).toEqual(before.filter((id) => id !== frozen.id));
    expect(after).toContain(twin.id);
  });
});
