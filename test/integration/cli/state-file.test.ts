// The state file: one process owns it at a time, status only reads it, and every problem with it
// is exit 2 and one line naming the path and the problem, never SQLite's own words.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { limitedRunCli, withoutPermissionOverride, jsonOf, killService, runCli, startCli, type Service } from './support.ts';

// Nothing listens on port 1: enough for what happens to the state file, no etcd needed.
const NOWHERE = ['--endpoints', 'http://127.0.0.1:1', '--timeout', '200ms'];
const SQLITE_WORDS = /unable to open database file|file is not a database|disk image is malformed|readonly database|ERR_SQLITE|SQLITE_[A-Z]/;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const lastLine = (text: string) => text.trimEnd().split('\n').at(-1) ?? '';

/** A state file with one open incident and a few pages of data, as remediate would leave it. */
async function realStateFile(file: string): Promise<void> {
  const store = openSqliteStore({ path: file });
  try {
    await store.openOrJoin({ clusterId: 'default', targetKey: 'memberName=etcd1', target: { memberName: 'etcd1' }, reason: 'test', now: Date.now() });
    for (let i = 0; i < 20; i++) {
      await store.putDeadLetter({
        receivedAt: Date.now(),
        source: 'test',
        detailType: 'MemberUnhealthy',
        payload: 'x'.repeat(2_000),
        error: `dead letter ${i}`,
      });
    }
  } finally {
    await store.close();
  }
}

/**
 * A state file as an earlier build of etcd-remediator left it: known by its schema version, which
 * such builds numbered 1 to 18, one a migration. Its incidents are in it, as they would be.
 */
async function earlierStateFile(file: string): Promise<void> {
  await realStateFile(file);
  const db = new DatabaseSync(file);
  try {
    db.exec('DELETE FROM schema_migrations');
    for (let version = 1; version <= 18; version++) db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)').run(version);
  } finally {
    db.close();
  }
}

const EARLIER_BUILD =
  /: was written by an earlier build of etcd-remediator \(schema 18\); finish or close its incidents with that build, or start from a new state file$/;

describe('state-file ownership', () => {
  let dir: string;
  const services: Service[] = [];
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-state-owner-'));
  });
  afterAll(async () => {
    for (const service of services) await killService(service);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a second remediate or run on a state file in use exits 2 at once, naming the pid and since when', async () => {
    const state = path.join(dir, 'owned.sqlite');
    const first = startCli(['remediate', ...NOWHERE, '--target', 'etcd1', '--state', state]);
    services.push(first);
    await first.waitForStderr(/MemberUnhealthy\s/);
    const inUse = new RegExp(`^etcd-remediator: state file ${escape(state)} in use by pid ${first.child.pid} since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`);

    const config = path.join(dir, 'owned.json');
    fs.writeFileSync(
      config,
      JSON.stringify({ state: 'owned.sqlite', listen: '127.0.0.1:0', clusters: [{ clusterId: 'default', endpoints: ['http://127.0.0.1:1'] }] }),
    );
    // The other commands side by side (a couple at a time) while the owner works on its incident;
    // status only reads, so it works while the file is in use.
    const others = limitedRunCli();
    const [seconds, run, status] = await Promise.all([
      Promise.all(['etcd1', 'etcd2'].map((target) => others(['remediate', ...NOWHERE, '--target', target, '--state', state], { timeoutMs: 10_000 }))),
      others(['run', '--config', config], { timeoutMs: 10_000 }),
      others(['status', '--state', state, '--json']),
    ]);
    // "At once": they did not wait for the owner, which is still at work on its incident.
    expect(first.child.exitCode).toBeNull();
    for (const second of seconds) {
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(inUse)]);
    }
    expect(run.code, run.stderr).toBe(2);
    expect(lastLine(run.stderr)).toMatch(inUse);
    expect(status.code, status.stderr).toBe(0);
    expect(jsonOf<{ incidents: { state: string }[] }>(status).incidents).toEqual([expect.objectContaining({ state: 'open' })]);

    first.child.kill('SIGINT');
    expect(await first.exited).toBe(130);
  });

  it('a lease left by a killed process is taken over', async () => {
    const state = path.join(dir, 'killed.sqlite');
    const first = startCli(['remediate', ...NOWHERE, '--target', 'etcd1', '--state', state]);
    services.push(first);
    // A probe means the incident is in the file: killed before that, there would be nothing to resume.
    await first.waitForStderr(/MembersProbed\s/);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = startCli(['remediate', ...NOWHERE, '--target', 'etcd1', '--state', state]);
    services.push(second);
    await second.waitForStderr(/resuming incident \S+/);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(130);
  });
});

describe.concurrent('state-file errors', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-state-errors-'));
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Each case is made in a directory of its own; `bound` runs the binary held to file permissions, as root is not. */
  const cases: { name: string; problem: RegExp; make: (root: string) => Promise<string>; bound?: boolean }[] = [
    {
      name: 'a directory',
      problem: /is a directory/,
      make: async (root) => {
        const file = path.join(root, 'state.sqlite');
        fs.mkdirSync(file);
        return file;
      },
    },
    {
      name: 'a missing parent directory',
      problem: /directory .*no-such-dir does not exist/,
      make: async (root) => path.join(root, 'no-such-dir', 'state.sqlite'),
    },
    {
      name: 'a corrupt file',
      problem: /is not a SQLite database/,
      make: async (root) => {
        const file = path.join(root, 'state.sqlite');
        fs.writeFileSync(file, 'this is not a database\n'.repeat(500));
        return file;
      },
    },
    {
      name: 'a truncated file',
      problem: /is damaged/,
      make: async (root) => {
        const file = path.join(root, 'state.sqlite');
        await realStateFile(file);
        fs.truncateSync(file, 4_096);
        return file;
      },
    },
    {
      name: 'a state file of an earlier build',
      problem: EARLIER_BUILD,
      make: async (root) => {
        const file = path.join(root, 'state.sqlite');
        await earlierStateFile(file);
        return file;
      },
    },
    {
      name: 'a read-only file',
      problem: /is read-only/,
      bound: true,
      make: async (root) => {
        const file = path.join(root, 'state.sqlite');
        await realStateFile(file);
        fs.chmodSync(file, 0o444);
        // The directory stays writable: only the file itself is read-only.
        fs.chmodSync(root, 0o777);
        return file;
      },
    },
  ];

  let n = 0;
  const caseDir = () => {
    n += 1;
    const root = path.join(dir, `case-${n}`);
    fs.mkdirSync(root, { mode: 0o755 });
    return root;
  };

  const expectOneLine = (run: { code: number | null; stdout: string; stderr: string }, state: string, problem: RegExp) => {
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^etcd-remediator: state file ${escape(state)}: `));
    expect(lines[0]).toMatch(problem);
    expect(lines[0]).not.toMatch(SQLITE_WORDS);
  };

  it.each(cases)('remediate on $name exits 2 naming the path and the problem', async ({ make, problem, bound }) => {
    const state = await make(caseDir());
    const run = await runCli(['remediate', ...NOWHERE, '--target', 'etcd1', '--state', state], bound ? withoutPermissionOverride() : {});
    expectOneLine(run, state, problem);
  });

  it.each(cases)('run on $name exits 2 naming the path and the problem', async ({ make, problem, bound }) => {
    const root = caseDir();
    const state = await make(root);
    const config = path.join(root, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ state, listen: '127.0.0.1:0', clusters: [{ clusterId: 'default', endpoints: ['http://127.0.0.1:1'] }] }));
    const run = await runCli(['run', '--config', config], bound ? withoutPermissionOverride() : {});
    expectOneLine(run, state, problem);
  });

  it.each(cases.filter((c) => !c.bound))('status on $name exits 2 naming the path and the problem', async ({ make, problem, name }) => {
    const state = await make(caseDir());
    const run = await runCli(['status', '--state', state]);
    // A missing parent means no file: status has always said so in its own words.
    if (name === 'a missing parent directory') {
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(`etcd-remediator: --state: no state file at ${state}\n`);
      return;
    }
    expectOneLine(run, state, problem);
  });

  it('status reads a read-only state file and writes nothing to it', async () => {
    const root = caseDir();
    const state = path.join(root, 'state.sqlite');
    await realStateFile(state);
    fs.chmodSync(state, 0o444);
    // Nor can SQLite make its -wal and -shm files beside it.
    fs.chmodSync(root, 0o555);
    const before = fs.readFileSync(state);
    const run = await runCli(['status', '--state', state, '--json'], withoutPermissionOverride());
    fs.chmodSync(root, 0o755);
    expect(run.code, run.stderr).toBe(0);
    expect(jsonOf<{ incidents: { target: Record<string, string>; state: string }[] }>(run).incidents).toEqual([
      expect.objectContaining({ target: { memberName: 'etcd1' }, state: 'open' }),
    ]);
    expect(fs.readFileSync(state).equals(before)).toBe(true);
    expect(fs.readdirSync(root)).toEqual(['state.sqlite']);
  });

  it('report on a state file of an earlier build exits 2 saying what to do, writing neither it nor a page', async () => {
    const root = caseDir();
    const state = path.join(root, 'state.sqlite');
    await earlierStateFile(state);
    const before = fs.readFileSync(state);
    const run = await runCli(['report', 'abcdef01', '--state', state, '--out', path.join(root, 'page.html')]);
    expectOneLine(run, state, EARLIER_BUILD);
    expect(fs.readFileSync(state).equals(before)).toBe(true);
    expect(fs.existsSync(path.join(root, 'page.html'))).toBe(false);
  });

  it('status on an empty file says it holds no state and writes no schema into it', async () => {
    const root = caseDir();
    const state = path.join(root, 'state.sqlite');
    fs.writeFileSync(state, '');
    const run = await runCli(['status', '--state', state]);
    expectOneLine(run, state, /holds no state/);
    expect(fs.statSync(state).size).toBe(0);
    expect(fs.readdirSync(root)).toEqual(['state.sqlite']);
  });
});
