// etcd with authentication enabled. etcd 3.4 lets anyone move leadership, but only a user with the
// root role remove a member: without the right user, remediating the leader must stop before the
// move (no election spent for a removal that cannot happen), and plan must say so too. The
// password is taken as etcdctl takes it, from a file or ETCDCTL_PASSWORD, never a flag value.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { limitedRunCli, jsonOf, killService, runCli, startCli, type CliRun, type Service } from './support.ts';

const run = promisify(execFile);
const ETCDCTL = process.env.ETCDCTL_BIN ?? 'etcdctl';
const ROOT_PASSWORD = 'root-secret-Zq81';
const VIEWER_PASSWORD = 'viewer-secret-Kx27';
const OPERATOR_PASSWORD = 'operator-secret-Pw55';

interface Result {
  outcome: string;
  reason: string;
  message: string;
  leaderMove: string;
  target: { memberId: string; name: string };
}

/**
 * A root user and role; viewer, with no role; operator, who may read and write our lock and
 * removal record but has not the root role; then authentication on.
 */
async function enableAuth(lab: Lab): Promise<void> {
  const ctl = (...args: string[]) =>
    run(ETCDCTL, ['--endpoints', lab.members[0]!.directUrl, '--command-timeout', '5s', ...args], { env: { ...process.env, ETCDCTL_API: '3' } });
  await ctl('role', 'add', 'root');
  await ctl('user', 'add', `root:${ROOT_PASSWORD}`);
  await ctl('user', 'grant-role', 'root', 'root');
  await ctl('user', 'add', `viewer:${VIEWER_PASSWORD}`);
  await ctl('role', 'add', 'remediator');
  await ctl('role', 'grant-permission', 'remediator', '--prefix=true', 'readwrite', '/etcd-remediator/');
  await ctl('user', 'add', `operator:${OPERATOR_PASSWORD}`);
  await ctl('user', 'grant-role', 'operator', 'remediator');
  await ctl('auth', 'enable');
}

const oneLine = (r: CliRun): string[] => r.stderr.trimEnd().split('\n');

describe('etcd with authentication enabled', () => {
  let lab: Lab;
  let dir: string;
  let rootFile: string;
  let viewerFile: string;
  let operatorFile: string;
  let service: Service | undefined;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    await enableAuth(lab);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-etcd-auth-'));
    rootFile = path.join(dir, 'root.password');
    viewerFile = path.join(dir, 'viewer.password');
    fs.writeFileSync(rootFile, `${ROOT_PASSWORD}\n`, { mode: 0o600 });
    fs.writeFileSync(viewerFile, VIEWER_PASSWORD, { mode: 0o600 });
    operatorFile = path.join(dir, 'operator.password');
    fs.writeFileSync(operatorFile, `${OPERATOR_PASSWORD}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await killService(service);
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const endpoints = () => ['--endpoints', lab.endpoints().join(',')];
  // A call deadline a fresh CLI process on a busy machine meets: connect, log in and list within it.
  const lab500 = ['--election-timeout', '500ms', '--timeout', '2s', '--backoff', '300ms'];
  const leaderAndTerm = async () => {
    const leader = await lab.leader();
    return { id: leader.id, name: leader.name, term: (await lab.status(leader.name)).raftTerm };
  };

  it('plan of the leader without credentials is blocked AUTH_FAILED, naming no user', async () => {
    const leader = await lab.leader();
    const r = await runCli(['plan', ...endpoints(), '--target', leader.name, ...lab500, '--json']);
    expect(r.code, r.stderr).toBe(3);
    const result = jsonOf<Result>(r);
    expect(result).toMatchObject({ outcome: 'blocked', reason: 'AUTH_FAILED' });
    expect(result.message).toContain("needs etcd's root role, and etcd refuses it to no user");
    expect(result.message).toContain('--password-file');
  });

  it('remediate of the leader without credentials blocks AUTH_FAILED before any move: same leader, same term', async () => {
    const before = await leaderAndTerm();
    const state = path.join(dir, 'no-user.sqlite');
    const r = await runCli(['remediate', ...endpoints(), '--target', before.name, ...lab500, '--state', state, '--json'], { timeoutMs: 45_000 });
    expect(r.code, r.stderr).toBe(3);
    const result = jsonOf<Result>(r);
    expect(result).toMatchObject({ outcome: 'blocked', reason: 'AUTH_FAILED', leaderMove: 'not-needed', target: { memberId: before.id, name: before.name } });
    expect(result.message).toContain('--user');
    expect(r.stderr).not.toMatch(/LeaderMoved/);
    expect(await leaderAndTerm()).toEqual(before);
    expect((await lab.memberList()).map((m) => m.id)).toContain(before.id);
  });

  it('remediate of the leader as a user who may write our lock but lacks the root role blocks AUTH_FAILED naming the user, before any move', async () => {
    const before = await leaderAndTerm();
    const state = path.join(dir, 'operator.sqlite');
    const r = await runCli(
      ['remediate', ...endpoints(), '--target', before.name, '--user', 'operator', '--password-file', operatorFile, ...lab500, '--state', state, '--json'],
      { timeoutMs: 45_000 },
    );
    expect(r.code, r.stderr).toBe(3);
    const result = jsonOf<Result>(r);
    expect(result).toMatchObject({ outcome: 'blocked', reason: 'AUTH_FAILED', target: { memberId: before.id } });
    expect(result.message).toContain("needs etcd's root role, and etcd refuses it to user operator");
    expect(result.message).toContain('leadership was not moved');
    expect(r.stderr).not.toMatch(/LeaderMoved/);
    expect(await leaderAndTerm()).toEqual(before);
    expect(r.stdout + r.stderr).not.toContain(OPERATOR_PASSWORD);
  });

  it('a user without the root role is named, for the leader and for a follower', async () => {
    const leader = await lab.leader();
    const r = await runCli(['plan', ...endpoints(), '--target', leader.name, '--user', 'viewer', '--password-file', viewerFile, ...lab500, '--json']);
    expect(r.code, r.stderr).toBe(3);
    const result = jsonOf<Result>(r);
    expect(result.reason).toBe('AUTH_FAILED');
    expect(result.message).toContain('refuses it to user viewer');
    expect(r.stdout + r.stderr).not.toContain(VIEWER_PASSWORD);
    // A follower needs no move, but its removal the same permission.
    const follower = lab.members.find((m) => m.name !== leader.name)!;
    const f = await runCli(['plan', ...endpoints(), '--target', follower.name, '--user', 'viewer', '--password-file', viewerFile, ...lab500, '--json']);
    expect(f.code, f.stderr).toBe(3);
    expect(jsonOf<Result>(f)).toMatchObject({ reason: 'AUTH_FAILED', leaderMove: 'not-needed' });
    expect(jsonOf<Result>(f).message).toContain('refuses it to user viewer');
    expect(jsonOf<Result>(f).message).toContain('; nothing was removed; blocked');
  });

  it('a wrong password is refused by etcd and said, never shown', async () => {
    const wrong = path.join(dir, 'wrong.password');
    fs.writeFileSync(wrong, 'not-the-password\n', { mode: 0o600 });
    const leader = await lab.leader();
    const r = await runCli(['plan', ...endpoints(), '--target', leader.name, '--user', 'root', '--password-file', wrong, ...lab500, '--json']);
    expect(r.code, r.stderr).toBe(3);
    const result = jsonOf<Result>(r);
    expect(result.reason).toBe('AUTH_FAILED');
    expect(result.message).toContain('authentication failed');
    expect(r.stdout + r.stderr).not.toContain('not-the-password');
  });

  it('the password comes from a file or ETCDCTL_PASSWORD, never from a flag value (exit 2, one line)', async () => {
    const leader = await lab.leader();
    const loose = path.join(dir, 'loose.password');
    fs.writeFileSync(loose, ROOT_PASSWORD, { mode: 0o644 });
    fs.chmodSync(loose, 0o644);
    const cases: { args: string[]; says: RegExp }[] = [
      { args: ['--user', 'root', '--password', ROOT_PASSWORD], says: /^--password: .*--password-file F.*ETCDCTL_PASSWORD/ },
      { args: ['--user', `root:${ROOT_PASSWORD}`], says: /^--user: give the user name alone.*--password-file F.*ETCDCTL_PASSWORD/ },
      { args: ['--user', 'root'], says: /^--user root: no password: give --password-file F .*or set ETCDCTL_PASSWORD/ },
      { args: ['--password-file', rootFile], says: /^--password-file: needs --user NAME/ },
      {
        args: ['--user', 'root', '--password-file', loose],
        says: new RegExp(`^--password-file ${loose}: is readable or writable by others \\(mode 644\\); chmod 600 it`),
      },
      { args: ['--user', 'root', '--password-file', path.join(dir, 'missing')], says: /^--password-file \S+missing: cannot read: ENOENT/ },
    ];
    // Each is refused before anything asks etcd: side by side, a couple at a time.
    const refused = limitedRunCli();
    const runs = await Promise.all(cases.map(({ args }) => refused(['plan', ...endpoints(), '--target', leader.name, ...args])));
    for (const [i, { says }] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, r.stderr).toBe(2);
      expect(oneLine(r)).toHaveLength(1);
      expect(r.stderr.replace(/^etcd-remediator: /, '')).toMatch(says);
      expect(r.stderr + r.stdout).not.toContain(ROOT_PASSWORD);
    }
  });

  it('with --user root and ETCDCTL_PASSWORD, plan of the leader says the move it would make: planned, not moved (a dry run moves nothing)', async () => {
    const leader = await lab.leader();
    const r = await runCli(['plan', ...endpoints(), '--target', leader.name, '--user', 'root', ...lab500, '--json'], {
      env: { ETCDCTL_PASSWORD: ROOT_PASSWORD },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf<Result>(r)).toMatchObject({ outcome: 'planned', reason: 'LEADER_MOVE_REQUIRED', leaderMove: 'planned' });
  });

  it("run's config takes auth.user and auth.passwordFile, and refuses a password in the config (exit 2, naming the field)", async () => {
    const write = (name: string, auth: object, policy: object = {}) => {
      const file = path.join(dir, `${name}.json`);
      fs.writeFileSync(
        file,
        JSON.stringify({ state: `${name}.sqlite`, listen: '127.0.0.1:0', clusters: [{ clusterId: 'lab', endpoints: lab.endpoints(), auth, policy }] }),
      );
      return file;
    };
    // Both are refused on reading the config, before anything asks etcd: at once.
    const [inline, noPassword] = await Promise.all([
      runCli(['run', '--config', write('inline', { user: 'root', password: ROOT_PASSWORD })]),
      runCli(['run', '--config', write('no-password', { user: 'root' })], { env: { ETCDCTL_PASSWORD: '' } }),
    ]);
    expect(inline.code, inline.stderr).toBe(2);
    expect(inline.stderr).toContain('clusters[0].auth.password: a password is not taken here');
    expect(inline.stderr).toContain('auth.passwordFile F, mode 600) or in ETCDCTL_PASSWORD');
    expect(inline.stderr).not.toContain(ROOT_PASSWORD);
    expect(noPassword.code, noPassword.stderr).toBe(2);
    expect(noPassword.stderr).toContain('clusters[0].auth.user root: no password: give clusters[0].auth.passwordFile F');

    // A dry run decides on the removal record, which only an authenticated user may read.
    const policy = { electionTimeout: '500ms', callTimeout: '1s', backoff: { base: '300ms', cap: '2s' }, dryRun: true };
    service = startCli(['run', '--config', write('dry', { user: 'root', passwordFile: 'root.password' }, policy)]);
    const running = service;
    await running.waitForStderr(/listening on /);
    const leader = await lab.leader();
    const event = { clusterId: 'lab', target: { memberName: leader.name }, reason: 'disk failing', source: 'test', observedAt: new Date().toISOString() };
    running.child.stdin!.write(`${JSON.stringify(event)}\n`);
    const [, incidentId] = await running.waitForStderr(/stdin line 1: accepted, incident (\S+)/);
    const line = await running.until(
      () =>
        running
          .stdout()
          .split('\n')
          .find((l) => l.includes(incidentId!)),
      `run to print the outcome of incident ${incidentId}`,
      30_000,
    );
    expect(JSON.parse(line)).toMatchObject({ incidentId, outcome: 'blocked', reason: 'DRY_RUN' });
    expect(running.stdout() + running.stderr()).not.toContain(ROOT_PASSWORD);
    await killService(running);
  });

  it('with --user root and --password-file, remediate of the leader moves leadership and removes it', async () => {
    const before = await lab.leader();
    const state = path.join(dir, 'root.sqlite');
    const r = await runCli(
      ['remediate', ...endpoints(), '--target', before.name, '--user', 'root', '--password-file', rootFile, ...lab500, '--state', state, '--json'],
      { timeoutMs: 45_000 },
    );
    expect(r.code, r.stderr).toBe(6);
    expect(jsonOf<Result>(r)).toMatchObject({ outcome: 'awaiting-replacement', leaderMove: 'moved', target: { memberId: before.id } });
    expect((await lab.memberList()).map((m) => m.id)).not.toContain(before.id);
    await lab.waitForLeader({ excluding: [before.name] });
    expect(r.stdout + r.stderr).not.toContain(ROOT_PASSWORD);
    // Nor in the state file, its journal or its WAL.
    const stateFiles = fs.readdirSync(dir).filter((f) => f.startsWith('root.sqlite'));
    expect(stateFiles).toContain('root.sqlite');
    for (const file of stateFiles) {
      expect(fs.readFileSync(path.join(dir, file)).includes(ROOT_PASSWORD), file).toBe(false);
    }
  });
});
