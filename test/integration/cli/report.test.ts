// `report` as a person runs it: the page written where --out says, or as incident-<id>.html in the
// current directory, said on stdout; bad input is one line naming the flag, exit 2, and no page.
// The page's name is made from an id in the shape ids are made in, never from what was typed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { INCIDENT_ID_EXAMPLE } from '../../../functions/core/incident/incident-id.ts';
import { testIncidentId } from '../../support/incident-ids.ts';
import { runCli } from './support.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');

describe('report', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-report-'));
  const state = path.join(dir, 'state.sqlite');
  let ids: string[];

  beforeAll(async () => {
    const store = openSqliteStore({ path: state });
    try {
      // Two incidents whose ids share a first character half of the time: the prefix test uses a longer one.
      ids = [];
      for (const name of ['etcd-1', 'etcd-2']) {
        const { incident } = await store.openOrJoin({
          clusterId: 'prod',
          targetKey: `memberName=${name}`,
          target: { memberName: name },
          reason: 'kubelet not ready',
          now: T0,
        });
        await store.appendJournal(incident.incidentId, {
          at: T0 + 1_000,
          step: 'move-leader:block',
          detail: { reason: 'QUORUM_AT_RISK', message: `removing ${name} would cost quorum.` },
        });
        await store.closeIncident(incident.incidentId, {
          outcome: 'blocked',
          result: { reason: 'QUORUM_AT_RISK', message: `removing ${name} would cost quorum.`, evidence: { needed: 2 } },
          now: T0 + 1_000,
        });
        ids.push(incident.incidentId);
      }
    } finally {
      await store.close();
    }
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes incident-<id>.html in the current directory by default, found by a prefix of the id, and says where', async () => {
    const cwd = fs.mkdtempSync(path.join(dir, 'cwd-'));
    const run = await runCli(['report', ids[0]!.slice(0, 13), '--state', state], { cwd });
    expect(run.code, run.stderr).toBe(0);
    const file = path.join(fs.realpathSync(cwd), `incident-${ids[0]}.html`);
    expect(run.stdout).toBe(`report of incident ${ids[0]} written to ${file}\n`);
    const html = fs.readFileSync(file, 'utf8');
    expect(html).toContain('data-reason="QUORUM_AT_RISK"');
    expect(html).toContain('removing etcd-1 would cost quorum.');
  });

  it('writes where --out says', async () => {
    const out = path.join(dir, 'page.html');
    const run = await runCli(['report', ids[1]!, '--state', state, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toContain('removing etcd-2 would cost quorum.');
  });

  it.each([
    { args: () => ['report', '--state', state], says: 'report takes one incident id (or a unique prefix of one), got none' },
    { args: () => ['report', 'a', 'b', '--state', state], says: 'report takes one incident id (or a unique prefix of one), got 2 arguments' },
    { args: () => ['report', testIncidentId(404), '--state', state], says: `no incident "${testIncidentId(404)}" in state file ${state}` },
    {
      args: () => ['report', 'zzzz', '--state', state],
      says: `INCIDENT: "zzzz" is not an incident id nor the start of one (ids are lowercase UUIDs, e.g. ${INCIDENT_ID_EXAMPLE})`,
    },
    { args: () => ['report', '', '--state', state], says: 'INCIDENT: "" is not an incident id nor the start of one' },
    { args: () => ['report', 'a/b', '--state', state], says: 'INCIDENT: "a/b" is not an incident id nor the start of one' },
    { args: () => ['report', ids[0]!], says: '--state is required (e.g. --state state.sqlite)' },
    { args: () => ['report', ids[0]!, '--state', path.join(dir, 'none.sqlite')], says: `--state: no state file at ${path.join(dir, 'none.sqlite')}` },
    { args: () => ['report', ids[0]!, '--state', state, '--table', 't'], says: '--state and --table: give one' },
    {
      args: () => ['report', ids[0]!, '--state', state, '--out', path.join(dir, 'no', 'such', 'x.html')],
      says: `--out: no directory ${path.join(dir, 'no', 'such')}`,
    },
    { args: () => ['report', ids[0]!, '--state', state, '--out', dir], says: `--out: ${dir} is a directory; give a file name` },
    { args: () => ['report', ids[0]!, '--state', state, '--out', ' '], says: '--out: a file name is required' },
  ])('refuses $says, exit 2, in one line', async ({ args, says }) => {
    const run = await runCli(args());
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(run.stderr).toContain(says);
  });

  it('report ../../../x: exit 2 naming the argument, before the state file is read, and no page anywhere', async () => {
    const cwd = fs.mkdtempSync(path.join(dir, 'deep-'));
    const inner = path.join(cwd, 'a', 'b', 'c');
    fs.mkdirSync(inner, { recursive: true });
    const run = await runCli(['report', '../../../x', '--state', path.join(dir, 'none.sqlite')], { cwd: inner });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'etcd-remediator: INCIDENT: "../../../x" is not an incident id nor the start of one (ids are lowercase UUIDs, e.g. ' + INCIDENT_ID_EXAMPLE + ')\n',
    );
    expect(
      fs
        .readdirSync(cwd, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.html')),
    ).toEqual([]);
  });

  it('an id not in our shape, found in the store, is never made a file name: refused without --out, written where --out says', async () => {
    // The store holds whatever was written to it; a prefix in the shape can still find such an id.
    const odd = 'abcdef01-../../x';
    const store = openSqliteStore({ path: state });
    try {
      await store.openOrJoin({
        clusterId: 'prod',
        targetKey: 'memberName=etcd-9',
        target: { memberName: 'etcd-9' },
        reason: 'r',
        now: T0,
        incidentId: odd,
      });
    } finally {
      await store.close();
    }
    const cwd = fs.mkdtempSync(path.join(dir, 'odd-id-'));
    const refused = await runCli(['report', 'abcdef01-', '--state', state], { cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `etcd-remediator: incident "${odd}": its id is not a lowercase UUID, so report makes no file name of it; give --out FILE.html\n`,
    );
    expect(fs.readdirSync(cwd)).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'x.html'))).toBe(false);

    const out = path.join(cwd, 'page.html');
    const written = await runCli(['report', 'abcdef01-', '--state', state, '--out', out], { cwd });
    expect(written.code, written.stderr).toBe(0);
    expect(fs.readdirSync(cwd)).toEqual(['page.html']);
  });

  it('--help says what the page shows', async () => {
    const run = await runCli(['report', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: etcd-remediator report INCIDENT \(--state FILE \| --table NAME \[--region R\]\) \[--out FILE\.html\]/);
  });
});

describe('report --table on a deployed stack’s table (dynalite)', () => {
  let dynamo: Dynalite | undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-report-table-'));
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes the page of an incident the table keeps, and names a table that is not there', async () => {
    const table = await dynamo!.createTable();
    const env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo!.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    const store = createDynamoIncidentStore({ client: dynamo!.client(), tableName: table });
    const { incident } = await store.openOrJoin({
      clusterId: 'prod',
      targetKey: 'memberName=etcd-3',
      target: { memberName: 'etcd-3' },
      reason: 'kubelet not ready',
      now: T0,
    });
    await store.appendJournal(incident.incidentId, {
      at: T0 + 500,
      step: 'move-leader:retry',
      detail: { reason: 'ELECTION_IN_PROGRESS', message: 'no leader yet.' },
    });
    const out = path.join(dir, 'page.html');
    const run = await runCli(['report', incident.incidentId.slice(0, 8), '--table', table, '--region', 'us-east-1', '--out', out], { env });
    expect(run.code, run.stderr).toBe(0);
    const html = fs.readFileSync(out, 'utf8');
    expect(html).toContain('Incident report: memberName=etcd-3 in cluster prod');
    expect(html).toContain('data-state="open"');
    expect(html).toContain('ELECTION_IN_PROGRESS: no leader yet.');

    const missing = await runCli(['report', 'abc', '--table', 'no-such-table', '--region', 'us-east-1'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^etcd-remediator: --table: no table no-such-table in this account and region/);
  });
});
