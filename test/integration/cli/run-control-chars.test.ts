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
  expect(text.split('\n').filter((line) => line.startsWith('reason: FORGED')), `${what} has a forged line`).toEqual([]);
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
    fs.writeFileSync(config, JSON.stringify({ state: 'state.sqlite', clusters: [{ clusterId: 'lab', endpoints: ['http://127.0.0.1:1'], policy: { backoff: { base: '5s', cap: '5s' } } }] }));
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
