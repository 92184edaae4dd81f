// run fed by stdin, to the end of its input: as the last stage of a pipeline it finishes what it
// accepted, prints the outcome and exits 0; with nothing accepted it exits 0 at once; refused input
// exits 2; and SIGTERM while it finishes stops it promptly, naming the incident that stays open.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, killService, runCli, startCli, type Service } from './support.ts';

describe('run fed by stdin, at the end of its input', () => {
  let lab: Lab;
  let dir: string;
  const services: Service[] = [];
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-eof-'));
  });
  afterAll(async () => {
    for (const service of services) await killService(service);
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** `run` on a config of its own (stdin only: no token), for the lab or for endpoints nobody answers on. */
  const start = (name: string, endpoints: string[], grace = '2s') => {
    const config = path.join(dir, `${name}.json`);
    // etcd refuses reconfiguration for ~5 s after start ("unhealthy cluster"): a short backoff retries it promptly.
    const policy = { electionTimeout: '500ms', callTimeout: '1s', grace, backoff: { base: '300ms', cap: '2s' } };
    fs.writeFileSync(config, JSON.stringify({ state: `${name}.sqlite`, listen: '127.0.0.1:0', clusters: [{ clusterId: 'lab', endpoints, policy }] }));
    const service = startCli(['run', '--config', config]);
    services.push(service);
    return { service, state: path.join(dir, `${name}.sqlite`) };
  };
  const report = (memberName: string) =>
    `${JSON.stringify({ clusterId: 'lab', target: { memberName }, reason: 'kubelet not ready', source: 'test', observedAt: new Date().toISOString() })}\n`;
  const statusOf = async (state: string) => {
    const status = await runCli(['status', '--state', state, '--json']);
    expect(status.code, status.stderr).toBe(0);
    return jsonOf<{ incidents: { incidentId: string; state: string }[] }>(status).incidents;
  };

  it('exits 0 at once when its input ends with nothing accepted', async () => {
    const { service } = start('nothing', ['http://127.0.0.1:1']);
    await service.waitForStderr(/listening on stdin only/);
    const ended = Date.now();
    service.child.stdin!.end();
    expect(await service.exited, service.stderr()).toBe(0);
    expect(Date.now() - ended).toBeLessThan(5_000);
    expect(service.stderr()).toMatch(/stdin ended with nothing accepted; exiting\n/);
    expect(service.stdout()).toBe('');
  });

  it('exits 2 when a line of its input was refused, naming the field', async () => {
    const { service } = start('refused', ['http://127.0.0.1:1']);
    service.child.stdin!.end(
      `${JSON.stringify({ clusterId: 'lab', target: { memberName: 'etcd1' }, reason: 'r', source: 'test', observedAt: 'yesterday' })}\n`,
    );
    expect(await service.exited, service.stderr()).toBe(2);
    expect(service.stderr()).toMatch(/stdin line 1: refused: .*observedAt/);
    expect(service.stderr()).toMatch(
      /stdin ended with nothing accepted; 1 line refused \(kept as dead letters: etcd-remediator status --state \S+ --dead-letters\); exiting\n/,
    );
  });

  it('SIGTERM while it finishes stops it promptly and names the incident that stays open', async () => {
    const leader = await lab.leader();
    await lab.fault(leader.name, 'cut');
    // The leader, while the cluster still has all three: after a removal it would be REPLACEMENT_PENDING at once.
    // A grace window far longer than the test: the incident waits in it when SIGTERM comes.
    const { service, state } = start('interrupted', lab.endpoints(), '10m');
    service.child.stdin!.end(report(leader.name));
    const [, incidentId] = await service.waitForStderr(/stdin line 1: accepted, incident (\S+)/);
    await service.waitForStderr(/stdin ended: waiting for 1 incident/);
    await service.waitForStderr(/LEADER_UNREACHABLE /, 20_000);
    const stopped = Date.now();
    service.child.kill('SIGTERM');
    expect(await service.exited, service.stderr()).toBe(0);
    expect(Date.now() - stopped).toBeLessThan(5_000);
    const lines = service.stderr().split('\n');
    const stopping = lines.indexOf('SIGTERM: stopping');
    expect(stopping, service.stderr()).toBeGreaterThanOrEqual(0);
    const named = `incident ${incidentId} (lab, memberName=${leader.name}, attempt `;
    const openLine = lines.slice(stopping + 1).find((l) => l.startsWith(named));
    expect(openLine, service.stderr()).toMatch(/^incident \S+ \(lab, memberName=\S+, attempt \d+\) stays open in /);
    expect(openLine!.endsWith(` stays open in ${state}; the next start resumes it`)).toBe(true);
    expect(await statusOf(state)).toEqual([expect.objectContaining({ incidentId, state: 'open' })]);
    await lab.fault(leader.name, 'pass');
  });

  it('finishes the incident it accepted, prints the outcome and exits 0', async () => {
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.name !== leader.name)!;
    await lab.fault(follower.name, 'cut');
    const { service, state } = start('drained', lab.endpoints());
    service.child.stdin!.end(report(follower.name));

    await service.until(() => (service.child.exitCode === null ? undefined : true), 'run to exit once its input is done', 45_000);
    expect(await service.exited, service.stderr()).toBe(0);
    expect(service.stderr()).not.toMatch(/unsettled top-level await/);
    const [, incidentId] = /stdin line 1: accepted, incident (\S+)/.exec(service.stderr()) ?? [];
    const outcome = service
      .stdout()
      .split('\n')
      .find((l) => l.includes(incidentId!));
    expect(JSON.parse(outcome!)).toMatchObject({ incidentId, outcome: 'awaiting-replacement', reason: 'TARGET_IS_FOLLOWER', target: { name: follower.name } });
    expect(service.stderr()).toMatch(/stdin ended: 1 incident finished; exiting\n/);
    expect((await lab.memberList()).map((m) => m.name)).not.toContain(follower.name);
    expect(await statusOf(state)).toEqual([expect.objectContaining({ incidentId, state: 'awaiting-replacement' })]);
  });
});
