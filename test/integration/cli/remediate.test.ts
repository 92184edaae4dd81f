// remediate end to end on a lab: the leader's client path is cut (a dead kubelet), the pipeline
// confirms it down, waits out the grace window and removes it without a leader move.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli, startCli, type Service } from './support.ts';

interface ResultJson {
  incidentId: string;
  clusterId: string;
  outcome: string;
  reason: string;
  leaderMove: string;
  target: { memberId: string; name: string; reportedAs?: string };
  timeline: { at: string; step: string; detail: string }[];
  evidence: { newLeader?: { id: string; name: string; term?: number } };
}

describe('remediate on a lab', () => {
  let lab: Lab;
  let dir: string;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-remediate-'));
  });
  afterAll(async () => {
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('removes a cut leader without a move once past --grace 2s, and status shows it', async () => {
    const leader = await lab.leader();
    const before = (await lab.memberList()).map((m) => m.id).sort();
    await lab.fault(leader.name, 'cut');
    const state = path.join(dir, 'state.sqlite');
    const args = ['--endpoints', lab.endpoints().join(','), '--target', leader.name, '--grace', '2s'];
    // etcd refuses reconfiguration for ~5 s after start ("unhealthy cluster"): a short backoff retries it promptly.
    const lab500 = ['--election-timeout', '500ms', '--timeout', '1s', '--backoff', '300ms'];
    const run = await runCli(['remediate', ...args, ...lab500, '--state', state, '--json'], { timeoutMs: 45_000 });
    expect(run.code, run.stderr).toBe(6);
    const result = jsonOf<ResultJson>(run);
    expect(result).toMatchObject({ outcome: 'awaiting-replacement', leaderMove: 'skipped', reason: 'LEADER_UNREACHABLE_PAST_GRACE', clusterId: 'default' });
    expect(result.target).toEqual({ memberId: leader.id, name: leader.name });
    expect(result.timeline.map((e) => e.step)).toEqual(expect.arrayContaining(['incident-opened', 'member-removed', 'leader-elected']));

    const after = (await lab.memberList()).map((m) => m.id).sort();
    expect(after).toEqual(before.filter((id) => id !== leader.id));
    const newLeader = await lab.waitForLeader({ excluding: [leader.name] });
    expect(result.evidence.newLeader?.id).toBe(newLeader.id);

    // Progress went to stderr, one line per event as it happened.
    expect(run.stderr).toMatch(/\+\S+\s+MemberUnhealthy\s/);
    expect(run.stderr).toMatch(/\+\S+\s+RemediationApproved\s+LEADER_UNREACHABLE_PAST_GRACE/);
    expect(run.stderr).toMatch(/\+\S+\s+RemediationCompleted\s/);

    const status = await runCli(['status', '--state', state, '--json']);
    expect(status.code, status.stderr).toBe(0);
    const { incidents } = jsonOf<{ incidents: { incidentId: string; state: string; member: { id: string } }[] }>(status);
    expect(incidents).toEqual([
      expect.objectContaining({ incidentId: result.incidentId, state: 'awaiting-replacement', member: expect.objectContaining({ id: leader.id }) }),
    ]);

    const timeline = await runCli(['status', result.incidentId.slice(0, 8), '--state', state]);
    expect(timeline.code, timeline.stderr).toBe(0);
    expect(timeline.stdout).toContain('member-removed');
  });

  it('takes a hex-looking --target that no member has as a name, not as a member id', async () => {
    const state = path.join(dir, 'hex-name.sqlite');
    const run = await runCli(['remediate', '--endpoints', lab.endpoints().join(','), '--target', 'deadbeef', '--timeout', '1s', '--state', state, '--json'], {
      timeoutMs: 30_000,
    });
    expect(run.code, run.stderr).toBe(3);
    expect(jsonOf<ResultJson>(run)).toMatchObject({
      outcome: 'blocked',
      reason: 'TARGET_NOT_FOUND',
      target: { memberId: '0', name: '', reportedAs: 'memberName deadbeef' },
    });
    expect(run.stderr).toMatch(/MemberUnhealthy\s+memberName deadbeef:/);
    // The text form names what was reported, not a member id of 0.
    const text = await runCli(
      ['remediate', '--endpoints', lab.endpoints().join(','), '--target', 'deadbeef', '--timeout', '1s', '--state', path.join(dir, 'hex-name-text.sqlite')],
      { timeoutMs: 30_000 },
    );
    expect(text.stdout).toContain('target:      memberName deadbeef (no member) in cluster');

    const status = await runCli(['status', '--state', state, '--json']);
    const { incidents } = jsonOf<{ incidents: { target: Record<string, string> }[] }>(status);
    expect(incidents.map((i) => i.target)).toEqual([{ memberName: 'deadbeef' }]);
  });
});

describe('remediate when no member list answers', () => {
  let dir: string;
  let service: Service | undefined;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-remediate-nolist-'));
  });
  afterAll(async () => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a hex-looking --target as a name and says so', async () => {
    // Nothing listens on port 1: the probe gets no member list, so nothing says abc123 is an id.
    const state = path.join(dir, 'state.sqlite');
    service = startCli(['remediate', '--endpoints', 'http://127.0.0.1:1', '--target', 'abc123', '--timeout', '200ms', '--state', state]);
    await service.waitForStderr(/MemberUnhealthy\s+member\w+ abc123:/);
    expect(service.stderr()).toMatch(/MemberUnhealthy\s+memberName abc123:/);
    expect(service.stderr()).toContain('no endpoint answered a member list: --target abc123 is taken as a member name');

    service.child.kill('SIGINT');
    expect(await service.exited).toBe(130);
    const status = await runCli(['status', '--state', state, '--json']);
    const { incidents } = jsonOf<{ incidents: { target: Record<string, string> }[] }>(status);
    expect(incidents.map((i) => i.target)).toEqual([{ memberName: 'abc123' }]);
  });
});
