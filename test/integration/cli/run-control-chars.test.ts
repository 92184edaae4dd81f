// run's log on stderr quotes what it was sent: a line that is not JSON, a report's target, the
// incident a report conflicts with, the open incidents it resumes. Each quote shows control
// characters escaped, so a report cannot forge a log line or drive the terminal; status shows the
// dead letters the same way.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killService, runCli, startCli, type Service } from './support.ts';

const ODD = 'a\nreason: FORGED\x1b[2J';
const SHOWN = 'a\\nreason: FORGED\\x1b[2J';

/** Any control character but the newline that ends each line of output. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

function expectHarmless(text: string, what: string): void {
  expect(RAW_CONTROL.exec(text)?.[0], `${what} holds a raw control character:\n${JSON.stringify(text)}`).toBeUndefined();
  expect(
    text.split('\n').filter((line) => line.startsWith('reason: FORGED')),
    `${what} has a forged line`,
  ).toEqual([]);
}

const report = (memberName: string, extra: Record<string, string> = {}) =>
  `${JSON.stringify({ clusterId: 'lab', target: { memberName }, reason: 'kubelet down', source: 'test', observedAt: new Date().toISOString(), ...extra })}\n`;

describe('run quotes what it is sent with control characters escaped', () => {
  let dir: string;
  let config: string;
  const services: Service[] = [];
  const start = () => {
    const service = startCli(['run', '--config', config]);
    services.push(service);
    return service;
  };
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-control-chars-'));
    config = path.join(dir, 'config.json');
    // No token: run takes stdin only. Port 1 answers "connection refused" at once, so the incident stays open, retrying.
    fs.writeFileSync(
      config,
      JSON.stringify({
        state: 'state.sqlite',
        clusters: [{ clusterId: 'lab', endpoints: ['http://127.0.0.1:1'], policy: { backoff: { base: '5s', cap: '5s' } } }],
      }),
    );
  });
  afterAll(async () => {
    for (const service of services) await killService(service);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('on stderr, as it runs and as it resumes; and in status --dead-letters', async () => {
    const first = start();
    await first.waitForStderr(/listening on stdin only/);
    first.child.stdin!.write('\x1b[2J\u202enot JSON\n');
    first.child.stdin!.write(report(ODD));
    const [, incidentId] = await first.waitForStderr(/stdin line 2: accepted, incident (\S+)/);
    // Another target under that incident's id: refused, naming both targets.
    first.child.stdin!.write(report(`${ODD}2`, { incidentId: incidentId! }));
    await first.waitForStderr(/stdin line 3: refused: /);
    await first.waitForStderr(/stdin line 1: refused: /);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expectHarmless(first.stderr(), 'run stderr');
    expect(first.stderr()).toContain(`is for lab/memberName=${SHOWN}, not lab/memberName=${SHOWN}2`);
    expect(first.stderr()).toContain(`memberName ${SHOWN}: kubelet down`);

    const second = start();
    await second.waitForStderr(/listening on stdin only/);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expectHarmless(second.stderr(), 'run stderr on resume');
    expect(second.stderr()).toContain(`resuming 1 open incident: ${incidentId} (lab, memberName=${SHOWN}, attempt `);

    const dead = await runCli(['status', '--state', path.join(dir, 'state.sqlite'), '--dead-letters']);
    expect(dead.code, dead.stderr).toBe(0);
    expectHarmless(dead.stdout, 'status --dead-letters');
    expect(dead.stdout).toContain('payload: \\x1b[2J\\u202enot JSON');
  });
});

describe('run: control characters in what names a cluster or its state', () => {
  let dir: string;
  const services: Service[] = [];
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-control-names-'));
  });
  afterAll(async () => {
    for (const service of services) await killService(service);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const configWith = (name: string, config: Record<string, unknown>): string => {
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify(config));
    return file;
  };

  it('a clusterId holding a newline is refused, exit 2, in one line naming the field; nothing starts', async () => {
    const config = configWith('odd-cluster', { state: 'odd.sqlite', clusters: [{ clusterId: ODD, endpoints: ['http://127.0.0.1:1'] }] });
    const run = await runCli(['run', '--config', config]);
    expect(run.code, run.stderr).toBe(2);
    expectHarmless(run.stderr, 'run stderr');
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('clusters[0].clusterId: must not hold control characters (a newline, a tab, an escape…)');
    expect(fs.existsSync(path.join(dir, 'odd.sqlite'))).toBe(false);
  });

  it.each([
    ['probe', ['probe', '--endpoints', 'http://127.0.0.1:1', '--cluster', ODD]],
    ['register', ['register', '--cluster', ODD, '--endpoints', 'http://127.0.0.1:1', '--table', 'no-table', '--region', 'us-east-1']],
  ])('%s --cluster holding a newline is refused the same way, before anything is asked', async (_command, args) => {
    const run = await runCli(args);
    expect(run.code, run.stderr).toBe(2);
    expectHarmless(run.stderr, 'stderr');
    expect(run.stderr).toBe(
      'etcd-remediator: --cluster: must not hold control characters (a newline, a tab, an escape…): it starts every line said about the cluster\n',
    );
  });

  it('the start line shows the state file it names with its control characters escaped', async () => {
    const config = configWith('odd-state', { state: `${ODD}.sqlite`, clusters: [{ clusterId: 'lab', endpoints: ['http://127.0.0.1:1'] }] });
    const service = startCli(['run', '--config', config]);
    services.push(service);
    await service.waitForStderr(/listening on stdin only/);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expectHarmless(service.stderr(), 'run stderr');
    expect(service.stderr()).toContain(`listening on stdin only; state ${path.join(dir, SHOWN)}.sqlite; clusters lab\n`);
  });
});
