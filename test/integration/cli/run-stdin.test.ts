// run on a lab, fed by stdin: one valid MemberUnhealthy as a JSON line goes through the whole
// pipeline, and the outcome is the JSON line run prints and what status reads from its state file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, runCli, startCli, type Service } from './support.ts';

interface OutcomeLine {
  incidentId: string;
  clusterId: string;
  outcome: string;
  reason: string;
  target: { memberId: string; name: string };
}

describe('run fed by stdin on a lab', () => {
  let lab: Lab;
  let dir: string;
  let service: Service | undefined;
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-stdin-'));
  });
  afterAll(async () => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('removes a cut follower reported on stdin and prints the outcome', async () => {
    const leader = await lab.leader();
    const follower = lab.members.find((m) => m.name !== leader.name)!;
    await lab.fault(follower.name, 'cut');
    const config = path.join(dir, 'config.json');
    // etcd refuses reconfiguration for ~5 s after start ("unhealthy cluster"): a short backoff retries it promptly.
    const policy = { electionTimeout: '500ms', callTimeout: '1s', grace: '2s', backoff: { base: '300ms', cap: '2s' } };
    fs.writeFileSync(
      config,
      JSON.stringify({ state: 'state.sqlite', listen: '127.0.0.1:0', clusters: [{ clusterId: 'lab', endpoints: lab.endpoints(), policy }] }),
    );
    service = startCli(['run', '--config', config]);
    const running = service;
    await running.waitForStderr(/listening on /);

    const event = {
      clusterId: 'lab',
      target: { memberName: follower.name },
      reason: 'kubelet not ready',
      source: 'test',
      observedAt: new Date().toISOString(),
    };
    running.child.stdin!.write(`${JSON.stringify(event)}\n`);
    const [, incidentId] = await running.waitForStderr(/stdin line 1: accepted, incident (\S+)/);

    const line = await running.until(
      () =>
        running
          .stdout()
          .split('\n')
          .find((l) => l.includes(incidentId!)),
      `run to print the outcome of incident ${incidentId}`,
      45_000,
    );
    const outcome = JSON.parse(line) as OutcomeLine;
    expect(outcome).toMatchObject({
      incidentId,
      clusterId: 'lab',
      outcome: 'awaiting-replacement',
      reason: 'TARGET_IS_FOLLOWER',
      target: { memberId: follower.id, name: follower.name },
    });
    expect((await lab.memberList()).map((m) => m.name)).not.toContain(follower.name);

    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    const status = await runCli(['status', '--state', path.join(dir, 'state.sqlite'), '--json']);
    expect(status.code, status.stderr).toBe(0);
    const { incidents } = jsonOf<{ incidents: { incidentId: string; state: string }[] }>(status);
    expect(incidents).toEqual([expect.objectContaining({ incidentId, state: 'awaiting-replacement' })]);
  });
});
