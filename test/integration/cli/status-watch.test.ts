// `status --watch` as a person sees it: in a real terminal (a detached tmux session of fixed size)
// the table is drawn, redrawn in place as an incident moves on (written by the real store), cut
// to the width when the terminal narrows, and ctrl-c leaves exit 0 with the cursor shown again.
// Off a terminal it prints a block only when something changed. `status --table` reads a deployed
// stack's table (dynalite). Bad combinations of flags are one line naming them, exit 2.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../../functions/core/common/decision.ts';
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { createTableInput } from '../../../functions/adapters/aws/dynamodb-table.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import type { IncidentStore } from '../../../functions/ports/incident-store.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { BIN, killService, runCli, startCli, type Service } from './support.ts';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-status-watch-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const retry = (reason: Decision['reason'], inMs: number): Decision => ({
  kind: 'retry',
  reason,
  at: Date.now() + inMs,
  reprobeNow: false,
  message: 'waits',
  evidence: {},
});

/** An open incident of `memberName`, its last decision a retry, written as the pipeline writes it. */
async function openIncident(store: IncidentStore, clusterId: string, memberName: string, decision: Decision) {
  const { incident } = await store.openOrJoin({
    clusterId,
    targetKey: `memberName=${memberName}`,
    target: { memberName },
    reason: 'unhealthy',
    now: Date.now() - 90_000,
  });
  return store.updateIncident(incident.incidentId, { attempt: 1, lastDecision: decision }, { expectVersion: incident.version, now: Date.now() });
}

/** A state file as run leaves it: an open incident waiting out a pause, and the pause. */
async function stateFile(name: string): Promise<{ file: string; incidentId: string }> {
  const file = path.join(dir, name);
  const store = openSqliteStore({ path: file });
  try {
    const incident = await openIncident(store, 'prod', 'etcd-1', retry('PAUSED', 60_000));
    await store.setPause('prod', { by: 'ops@box', at: Date.now(), why: 'upgrade' });
    return { file, incidentId: incident.incidentId };
  } finally {
    await store.close();
  }
}

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
describe('status --watch in a terminal (tmux)', () => {
  // Never a silent skip: without tmux nothing here could look at the screen, and that is said.
  beforeAll(() => {
    if (!hasTmux) throw new Error('tmux is not installed: status --watch is tested in a tmux terminal (apt-get install -y tmux)');
  });
  // A server of its own (-L) and a session of its own: nothing of anyone else's tmux is touched.
  const socket = `status-watch-${randomUUID().slice(0, 8)}`;
  const session = `status-${randomUUID().slice(0, 8)}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const screen = () => tmux('capture-pane', '-p', '-t', session);
  const until = (what: string, holds: (text: string) => boolean) =>
    waitFor(
      async () => {
        const text = screen();
        if (holds(text)) return text;
        throw new Error(`the screen shows:\n${text}`);
      },
      { timeoutMs: 5_000, what },
    );
  afterEach(() => {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      // Already gone.
    }
  });

  it('draws the table, redraws it in place as the incident moves on, fits a narrower terminal, and ctrl-c exits 0 with the cursor shown', async () => {
    const { file, incidentId } = await stateFile('tty.sqlite');
    // Under a shell that says how it exited and stays, so the terminal's cursor can be read after
    // (its trap runs a command, so ctrl-c reaches status with SIGINT as it would from a prompt).
    const shell = ['sh', '-c', 'trap : INT; "$@"; echo "status exited $?"; exec sleep 60', 'sh'];
    tmux(
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '120',
      '-y',
      '30',
      '--',
      ...shell,
      process.execPath,
      BIN,
      'status',
      '--watch',
      '--interval',
      '300ms',
      '--state',
      file,
    );

    const first = await until('the table', (s) => /^ID +CLUSTER +TARGET +STATE +REASON +AGE +NEXT +ATTEMPT$/m.test(s) && s.includes('PAUSED'));
    const lines = first.split('\n');
    expect(lines[0]).toMatch(/^every 300ms: state file .*tty\.sqlite at \S+Z \(ctrl-c quits\)$/);
    expect(first).toMatch(/^cluster prod paused by ops@box since \S+: upgrade \(etcd-remediator resume --cluster prod\)$/m);
    expect(first).toMatch(new RegExp(`^${incidentId.slice(0, 8)}  prod +etcd-1 +open +PAUSED +1m3\\ds +in [45]\\ds +1$`, 'm'));
    expect(tmux('display', '-p', '-t', session, '#{cursor_flag}').trim()).toBe('0');

    // The pipeline moves it on: a new attempt, then blocked; a second incident appears, overdue for its replacement.
    const writer = openSqliteStore({ path: file });
    try {
      const open = (await writer.getIncident(incidentId))!;
      await writer.updateIncident(
        incidentId,
        { attempt: 2, lastDecision: { kind: 'block', reason: 'QUORUM_AT_RISK', message: 'no', evidence: {} } },
        { expectVersion: open.version, now: Date.now() },
      );
      await writer.closeIncident(incidentId, { outcome: 'blocked', result: {}, now: Date.now() });
      const other = await openIncident(writer, 'staging', 'a-member-whose-name-is-long-enough-to-be-cut', retry('LEADER_UNREACHABLE_UNCONFIRMED', 5_000));
      await writer.closeIncident(other.incidentId, { outcome: 'awaiting-replacement', result: {}, now: Date.now() });
      await writer.appendJournal(other.incidentId, {
        at: Date.now(),
        step: 'replacement-checked',
        detail: { reason: 'REPLACEMENT_OVERDUE', message: 'overdue' },
      });
    } finally {
      await writer.close();
    }
    const moved = await until(
      'the incident blocked and the overdue one listed',
      (s) => /\bblocked +QUORUM_AT_RISK\b/.test(s) && s.includes('REPLACEMENT_OVERDUE'),
    );
    // Redrawn in place: one title, one header, nothing scrolled off into the history.
    expect(moved.split('\n')[0]).toMatch(/^every 300ms: /);
    expect(moved.match(/^ID +CLUSTER/gm)).toHaveLength(1);
    expect(moved.match(/^every 300ms/gm)).toHaveLength(1);
    expect(tmux('display', '-p', '-t', session, '#{history_size}').trim()).toBe('0');
    // What needs a person first: both need one, the older (the blocked one) first.
    const rows = moved.split('\n').filter((l) => /^[0-9a-f]{8} /.test(l));
    expect(rows.map((l) => l.split(/ {2,}/)[3])).toEqual(['blocked', 'awaiting-replacement']);

    // 120 columns: the long member name gives way, the rest is whole.
    expect(moved).toMatch(/ a-member-whose-name-is-long-en\S*… +awaiting-replacement +REPLACEMENT_OVERDUE +\d+m\d+s +- +1$/m);
    expect(moved.split('\n').every((l) => l.length <= 120)).toBe(true);
    tmux('resize-window', '-t', session, '-x', '100', '-y', '30');
    const narrow = await until(
      'the table redrawn for 100 columns',
      (s) => /^ID +CLUSTER +TARGET +STATE +REASON +AGE +NEXT +ATTEMPT$/m.test(s) && / a-member-\S{1,14}… /.test(s),
    );
    expect(narrow.split('\n').every((l) => l.length <= 100)).toBe(true);
    expect(narrow.match(/^ID +CLUSTER/gm)).toHaveLength(1);

    tmux('send-keys', '-t', session, 'C-c');
    const after = await until('status to exit on ctrl-c', (s) => /^status exited \d+$/m.test(s));
    expect(after).toMatch(/^status exited 0$/m);
    expect(tmux('display', '-p', '-t', session, '#{cursor_flag}').trim()).toBe('1');
  });
});

describe('status --watch off a terminal', () => {
  let service: Service | undefined;
  afterEach(() => killService(service));

  it('prints a block when the table says something new, not as time passes, and exits 0 on SIGTERM', async () => {
    const { file, incidentId } = await stateFile('pipe.sqlite');
    service = startCli(['status', '--watch', '--interval', '100ms', '--state', file]);
    const blocks = () => service!.stdout().split(/^--- /m).slice(1);
    await service.until(() => (blocks().length === 1 && blocks()[0]!.includes('PAUSED') ? true : undefined), 'the first block');
    expect(blocks()[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+Z\ncluster prod paused by ops@box/);
    expect(service.stdout()).not.toContain('\x1b');
    // Ten reads, ages ticking meanwhile: no new block, as nothing changed.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(blocks()).toHaveLength(1);

    const writer = openSqliteStore({ path: file });
    try {
      await writer.closeIncident(incidentId, { outcome: 'closed', result: {}, now: Date.now() });
    } finally {
      await writer.close();
    }
    await service.until(() => (blocks().length === 2 ? true : undefined), 'a second block once the incident closed');
    expect(blocks()[1]).toMatch(/ prod +etcd-1 +closed +PAUSED +/);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.stderr()).toBe('');
  });
});

describe('status --table on a deployed stack’s table (dynalite)', () => {
  let dynamo: Dynalite;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => dynamo?.close());

  it('shows the table’s incidents, what needs a person first, and its pauses', async () => {
    const table = await dynamo.createTable();
    const env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    const store = createDynamoIncidentStore({ client: dynamo.client(), tableName: table });
    const waiting = await openIncident(store, 'prod', 'etcd-1', retry('ELECTION_IN_PROGRESS', 30_000));
    const overdue = await openIncident(store, 'prod', 'etcd-2', retry('LEADER_UNREACHABLE_UNCONFIRMED', 1_000));
    await store.closeIncident(overdue.incidentId, { outcome: 'awaiting-replacement', result: {}, now: Date.now() });
    await store.appendJournal(overdue.incidentId, {
      at: Date.now(),
      step: 'replacement-checked',
      detail: { reason: 'REPLACEMENT_OVERDUE', message: 'overdue' },
    });
    await store.setPause(undefined, { by: 'ops@box', at: Date.now(), why: 'zone b' });

    const run = await runCli(['status', '--table', table, '--region', 'us-east-1'], { env });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^paused fleet-wide by ops@box since \S+: zone b \(etcd-remediator resume\)$/);
    expect(lines[1]).toMatch(/^ID +CLUSTER +TARGET/);
    expect(lines.slice(2).map((l) => l.split(/ {2,}/).slice(0, 5))).toEqual([
      [overdue.incidentId.slice(0, 8), 'prod', 'etcd-2', 'awaiting-replacement', 'REPLACEMENT_OVERDUE'],
      [waiting.incidentId.slice(0, 8), 'prod', 'etcd-1', 'open', 'ELECTION_IN_PROGRESS'],
    ]);
    // No scheduler timers in the table: the next step is the last retry's.
    expect(lines[3]).toMatch(/ in 2\ds +1$/);

    const missing = await runCli(['status', '--table', 'no-such-table', '--region', 'us-east-1'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^etcd-remediator: --table: no table no-such-table in this account and region/);
  });
});

describe('status --watch --table when a read fails', () => {
  let dynamo: Dynalite;
  let service: Service | undefined;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await killService(service);
    await dynamo?.close();
  });

  it('says so on stderr, keeps watching, and shows the table again once it reads', async () => {
    const table = await dynamo.createTable();
    const env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    const admin = dynamo.client();
    await openIncident(createDynamoIncidentStore({ client: admin, tableName: table }), 'prod', 'etcd-1', retry('ELECTION_IN_PROGRESS', 30_000));
    service = startCli(['status', '--watch', '--interval', '100ms', '--table', table, '--region', 'us-east-1'], { env });
    const blocks = () => service!.stdout().split(/^--- /m).slice(1);
    await service.until(() => (blocks().length === 1 && blocks()[0]!.includes('etcd-1') ? true : undefined), 'the first block');

    await admin.send(new DeleteTableCommand({ TableName: table }));
    await service.waitForStderr(/^etcd-remediator: status could not read table \S+ at \S+Z: .*no table .* \(trying again every 100ms\)$/m);
    // Said once for the whole outage, not once a read.
    expect(service.stderr().match(/could not read/g)).toHaveLength(1);

    await admin.send(new CreateTableCommand(createTableInput(table)));
    await openIncident(createDynamoIncidentStore({ client: admin, tableName: table }), 'prod', 'etcd-2', retry('ELECTION_IN_PROGRESS', 30_000));
    // The table is back before the incident is written in it: a read between the two finds it
    // empty, and says so as a table (never as an error), before the read that shows the incident.
    await service.until(
      () =>
        blocks()
          .slice(1)
          .some((b) => / etcd-2 +open /.test(b))
          ? true
          : undefined,
      'a block with the incident once the table reads again',
    );
    for (const block of blocks().slice(1)) expect(block).toMatch(/ etcd-2 +open |^\S+Z\nno incidents\n$/);
    expect(service.stderr().match(/could not read/g)).toHaveLength(1);
    expect(service.stderr()).toMatch(/^etcd-remediator: status read table \S+ again at \S+Z$/m);
    service.child.kill('SIGINT');
    expect(await service.exited).toBe(0);
  });
});

describe('status flags that do not go together', () => {
  it('are refused in one line naming them, exit 2', async () => {
    const state = path.join(dir, 'flags.sqlite');
    await openSqliteStore({ path: state }).close();
    const cases = [
      [['--watch', '--json'], /--watch draws the table for people/],
      [['--watch', 'abc'], /--watch redraws the table of incidents: give no INCIDENT/],
      [['--interval', '1s'], /--interval goes with --watch/],
      [['--watch', '--interval', '10ms'], /--interval: at least 100ms/],
      [['--all', '--dead-letters'], /--all goes with the table/],
      [['--table', 't', '--state', state], /--state and --table: give one/],
    ] as const;
    const runs = await Promise.all(
      cases.map(([args]) => runCli(['status', ...((args as readonly string[]).includes('--state') ? [] : ['--state', state]), ...args])),
    );
    for (const [i, [args, says]] of cases.entries()) {
      const run = runs[i]!;
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(says);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
