// Member names are whatever etcd was started with, newlines and ESC included. On a lab whose
// members are named so, the human output of probe, remediate and status shows the names escaped,
// forges no line and sends no terminal escape; --json keeps the exact names.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli } from './support.ts';

/** Each member is this and its number: a line of its own that reads like a result's, and a clear-screen. */
const ODD_PREFIX = 'a\nreason: FORGED\x1b[2J';

/** Any control character but the newline that ends each line of output. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

/** A name as human output must show it. */
const shown = (name: string) => name.replaceAll('\n', '\\n').replaceAll('\x1b', '\\x1b');

function expectHarmless(text: string, what: string): void {
  expect(RAW_CONTROL.exec(text)?.[0], `${what} holds a raw control character:\n${JSON.stringify(text)}`).toBeUndefined();
  expect(
    text.split('\n').filter((line) => line.startsWith('reason: FORGED')),
    `${what} has a forged line`,
  ).toEqual([]);
}

describe('member names with control characters', () => {
  let lab: Lab;
  let dir: string;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500, namePrefix: ODD_PREFIX });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-control-chars-'));
  });
  afterAll(async () => {
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('probe shows them escaped; probe --json keeps them exact', async () => {
    const leader = await lab.leader();
    const run = await runCli(['probe', '--endpoints', lab.endpoints().join(',')]);
    expect(run.code, run.stderr).toBe(0);
    expectHarmless(run.stdout, 'probe');
    expect(run.stdout).toContain(`leader: ${shown(leader.name)} (${leader.id}) agreed`);
    for (const member of lab.members) expect(run.stdout).toContain(`| ${shown(member.name)} `);

    const json = jsonOf<{ members: { name: string }[] }>(await runCli(['probe', '--endpoints', lab.endpoints().join(','), '--json']));
    expect(json.members.map((m) => m.name).sort()).toEqual(lab.members.map((m) => m.name).sort());
  });

  it('plan shows them escaped', async () => {
    const leader = await lab.leader();
    const run = await runCli(['plan', '--endpoints', lab.endpoints().join(','), '--target', leader.name, '--election-timeout', '500ms', '--timeout', '1s']);
    expect(run.code, run.stderr).toBe(0);
    expectHarmless(run.stdout, 'plan');
    expect(run.stdout).toContain(`target:      ${shown(leader.name)} (${leader.id}) in cluster default`);
    expect(run.stdout).toMatch(/^reason: {6}LEADER_MOVE_REQUIRED$/m);
  });

  it('remediate (result and progress) and status (list and timeline) show them escaped', async () => {
    const leader = await lab.leader();
    const state = path.join(dir, 'state.sqlite');
    const lab500 = ['--election-timeout', '500ms', '--timeout', '1s', '--backoff', '300ms'];
    const run = await runCli(['remediate', '--endpoints', lab.endpoints().join(','), '--target', leader.name, ...lab500, '--state', state], {
      timeoutMs: 45_000,
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(6);
    expectHarmless(run.stdout, 'remediate stdout');
    expectHarmless(run.stderr, 'remediate stderr');
    expect(run.stdout).toContain(`target:      ${shown(leader.name)} (${leader.id}) in cluster default`);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('reason:'))).toHaveLength(1);
    expect(run.stderr).toMatch(/\+\S+\s+MemberUnhealthy\s/);
    expect(run.stderr).toContain(`memberName ${shown(leader.name)}: remediation requested`);
    expect(run.stderr.split('\n').filter((line) => line.includes('RemediationCompleted'))).toEqual([
      expect.stringContaining(`${shown(leader.name)} removed; `),
    ]);

    const list = await runCli(['status', '--state', state]);
    expect(list.code, list.stderr).toBe(0);
    expectHarmless(list.stdout, 'status');
    expect(list.stdout).toContain(` ${shown(leader.name)} `);

    const { incidents } = jsonOf<{ incidents: { incidentId: string; target: { memberName?: string } }[] }>(
      await runCli(['status', '--state', state, '--json']),
    );
    expect(incidents.map((i) => i.target.memberName)).toEqual([leader.name]);

    const timeline = await runCli(['status', incidents[0]!.incidentId, '--state', state]);
    expect(timeline.code, timeline.stderr).toBe(0);
    expectHarmless(timeline.stdout, 'status INCIDENT');
    expect(timeline.stdout).toContain(`target:      memberName=${shown(leader.name)} → ${shown(leader.name)} (${leader.id})`);
    expect(timeline.stdout).toContain('member-removed');
  });
});
