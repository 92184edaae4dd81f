// remediate does only what it is asked: an open incident of another target in the state file is
// refused and named with the command that resumes it, never run on the side; --resume runs
// exactly the incident it names (here to its close: its leader healed meanwhile).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { jsonOf, killService, runCli, startCli, type Service } from './support.ts';

interface ResultJson {
  incidentId: string;
  outcome: string;
  target: { memberId: string; name: string };
}

describe('remediate with other open incidents in its state file, on a lab', () => {
  let lab: Lab;
  let dir: string;
  let first: Service | undefined;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-remediate-scope-'));
  });
  afterAll(async () => {
    await killService(first);
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses --target F while L is open, naming L and how to resume it; --resume L runs L alone', async () => {
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.name !== leader.name)!;
    const state = path.join(dir, 'state.sqlite');
    // etcd refuses reconfiguration for ~5 s after start ("unhealthy cluster"): a short backoff retries it promptly.
    const common = [
      '--endpoints',
      lab.endpoints().join(','),
      '--election-timeout',
      '500ms',
      '--timeout',
      '1s',
      '--backoff',
      '300ms',
      '--grace',
      '60s',
      '--state',
      state,
    ];

    // L's remediation is interrupted inside its grace window, then L's path heals.
    await lab.fault(leader.name, 'cut');
    first = startCli(['remediate', ...common, '--target', leader.name]);
    await first.waitForStderr(/RetryRequested\s+LEADER_UNREACHABLE/, 30_000);
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(130);
    const [, opened] = /incident (\S+) stays open/.exec(first.stderr()) ?? [];
    expect(opened, first.stderr()).toBeDefined();
    const incidentId = opened!;
    await lab.fault(leader.name, 'heal');

    const other = await runCli(['remediate', ...common, '--target', follower.name, '--json'], { timeoutMs: 30_000 });
    expect(other.code, other.stderr).toBe(2);
    expect(other.stdout).toBe('');
    expect(other.stderr).toContain(`etcd-remediator: --target ${follower.name}: the state file ${state} holds 1 other open incident`);
    expect(other.stderr).toMatch(new RegExp(`${incidentId}\\s.*memberName=${leader.name}`));
    expect(other.stderr).toContain(`etcd-remediator remediate --resume ${incidentId} --state ${state}`);
    expect(other.stderr).toMatch(/etcd-remediator run --config FILE\b.*resumes every open incident/);
    expect((await lab.memberList()).map((m) => m.name).sort()).toEqual(lab.members.map((m) => m.name).sort());

    // Healed inside its grace window: the resumed incident closes as recovered, exit 5, and
    // nothing is removed, L or F.
    const resumed = await runCli(['remediate', ...common, '--resume', incidentId, '--json'], { timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(5);
    expect(resumed.stderr).toContain(`resuming incident ${incidentId}`);
    expect(jsonOf<ResultJson & { reason: string }>(resumed)).toMatchObject({
      incidentId,
      outcome: 'closed',
      reason: 'TARGET_RECOVERED',
      target: { memberId: leader.id, name: leader.name },
    });
    expect((await lab.memberList()).map((m) => m.name).sort()).toEqual(lab.members.map((m) => m.name).sort());

    const again = await runCli(['remediate', ...common, '--resume', incidentId]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(new RegExp(`--resume ${incidentId}: the incident is closed already; nothing to resume`));
  });
});

describe('remediate --resume with more than one open incident', () => {
  let dir: string;
  let service: Service | undefined;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-remediate-resume-'));
  });
  afterAll(async () => {
    await killService(service);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('resumes the incident it names and leaves the other as it was', async () => {
    const state = path.join(dir, 'state.sqlite');
    const store = openSqliteStore({ path: state });
    const open = async (name: string) =>
      (await store.openOrJoin({ clusterId: 'default', targetKey: `memberName=${name}`, target: { memberName: name }, reason: 'test', now: Date.now() }))
        .incident;
    const named = await open('etcd1');
    const left = await open('etcd2');
    await store.close();

    // Nothing listens on port 1: the resumed incident retries, which is all this needs.
    service = startCli(['remediate', '--endpoints', 'http://127.0.0.1:1', '--timeout', '200ms', '--resume', named.incidentId.slice(0, 8), '--state', state]);
    await service.waitForStderr(new RegExp(`resuming incident ${named.incidentId}`));
    await service.waitForStderr(/RetryRequested\s/);
    expect(service.stderr()).toContain(`1 other open incident stays as it is: ${left.incidentId}`);
    service.child.kill('SIGINT');
    expect(await service.exited).toBe(130);

    const after = openSqliteStore({ path: state });
    try {
      expect((await after.getIncident(named.incidentId))!.version).toBeGreaterThan(named.version);
      expect(await after.getIncident(left.incidentId)).toEqual(left);
    } finally {
      await after.close();
    }
  });

  it.each([
    { args: ['--target', 'etcd1', '--resume', 'abc'], names: '--resume and --target: give one' },
    { args: ['--resume', 'abc'], names: '--resume needs --state FILE' },
    { args: ['--resume', 'abc', '--dry-run', '--state', 'x.sqlite'], names: '--dry-run: cannot resume an incident' },
  ])('refuses $names', async ({ args, names }) => {
    const run = await runCli(['remediate', '--endpoints', 'http://127.0.0.1:1', ...args], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(names);
  });
});
