// run's /metrics and /healthz on a real lab: the seed case (the leader cut, removed without a move
// once the grace window passed) posted with the token, then a scrape read by a Prometheus text
// parser counts what the incident did, under the metric table's names. A scrape without the token
// is refused as a post to /events is; /healthz needs none, and says 503 when the state file
// refuses writes (a real full disk).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { fullDiskUnavailable, smallDisk, type SmallDisk } from '../../support/full-disk.ts';
import { parseExposition, samplesOf, valueOf } from '../../support/prometheus-text.ts';
import { killService, startCli, type Service } from './support.ts';

const TOKEN = 'run-metrics-token-8c2f4a6e1b9d3057';
const bearer = { authorization: `Bearer ${TOKEN}` };

describe('run: /metrics and /healthz', () => {
  let lab: Lab;
  let dir: string;
  const services: Service[] = [];
  beforeAll(async () => {
    lab = await startLab({ members: 3, electionTimeoutMs: 500 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-metrics-'));
  });
  afterAll(async () => {
    for (const s of services) await killService(s);
    await lab?.down();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('counts the seed case: one removal, no move, one time to remediate, probe latency for each member; refuses a scrape without the token', async () => {
    const leader = await lab.leader();
    await lab.fault(leader.name, 'cut');
    const config = path.join(dir, 'config.json');
    const policy = { electionTimeout: '500ms', callTimeout: '1s', grace: '2s', backoff: { base: '300ms', cap: '1s' } };
    fs.writeFileSync(
      config,
      JSON.stringify({ state: 'state.sqlite', listen: '127.0.0.1:0', token: TOKEN, clusters: [{ clusterId: 'lab', endpoints: lab.endpoints(), policy }] }),
    );
    const service = startCli(['run', '--config', config]);
    services.push(service);
    const [, events] = await service.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)\/events; .*; bearer token/);
    const url = (p: string) => `${events!}${p}`;

    for (const headers of [{}, { authorization: 'Bearer not-the-token-but-long-enough' }]) {
      const refused = await fetch(url('/metrics'), { headers });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      expect(await refused.text()).not.toContain('etcd_remediator_');
    }
    await service.waitForStderr(/refused GET \/metrics from 127\.0\.0\.1:\d+: no bearer token/);
    const healthy = await fetch(url('/healthz'));
    expect([healthy.status, await healthy.text()]).toEqual([200, 'ok\n']);

    // A refusal kept as a dead letter, then the seed case.
    expect((await fetch(url('/events'), { method: 'POST', body: '{"clusterId":"lab"}', headers: bearer })).status).toBe(400);
    const report = { clusterId: 'lab', target: { memberName: leader.name }, reason: 'kubelet gone', source: 'test', observedAt: new Date().toISOString() };
    const posted = await fetch(url('/events'), { method: 'POST', body: JSON.stringify(report), headers: bearer });
    expect(posted.status).toBe(202);
    const { incidentId } = (await posted.json()) as { incidentId: string };
    const line = await service.until(
      () =>
        service
          .stdout()
          .split('\n')
          .find((l) => l.includes(incidentId)),
      `the outcome of incident ${incidentId}`,
      30_000,
    );
    expect(JSON.parse(line)).toMatchObject({ incidentId, outcome: 'awaiting-replacement', target: { name: leader.name } });

    const scraped = await fetch(url('/metrics'), { headers: bearer });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const scrape = parseExposition(await scraped.text());
    // The removal, without a move: the leader was unreachable past the grace window.
    expect(valueOf(scrape, 'etcd_remediator_remediation_completed_total')).toBe(1);
    expect(valueOf(scrape, 'etcd_remediator_leader_moved_total')).toBe(0);
    expect(valueOf(scrape, 'etcd_remediator_remediation_blocked_total')).toBeUndefined();
    expect(samplesOf(scrape, 'etcd_remediator_time_to_remediate_seconds_count').map((s) => s.value)).toEqual([1]);
    expect(valueOf(scrape, 'etcd_remediator_time_to_remediate_seconds_sum')).toBeGreaterThan(2);
    // Waited inside the grace window, said by its reason.
    expect(valueOf(scrape, 'etcd_remediator_retry_requested_total', { reason: 'LEADER_UNREACHABLE' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(scrape, 'etcd_remediator_dead_letter_total', { source: 'http' })).toBe(1);

    // Every member over the one path, each probe of the incident; the cut leader refused, the others answered.
    const latency = samplesOf(scrape, 'etcd_remediator_probe_latency_seconds_count', { cluster: 'lab', path: 'direct' });
    for (const member of lab.members)
      expect(valueOf(scrape, 'etcd_remediator_probe_latency_seconds_count', { member: member.name, path: 'direct' }), member.name).toBeGreaterThan(0);
    expect(latency.filter((s) => s.labels.member === leader.name).map((s) => s.labels.reachability)).toEqual(['refused']);
    for (const member of lab.members.filter((m) => m.name !== leader.name)) {
      expect(
        latency.filter((s) => s.labels.member === member.name).map((s) => s.labels.reachability),
        member.name,
      ).toContain('ok');
    }

    // The incident awaits its replacement, as the state file says at each scrape.
    expect(valueOf(scrape, 'etcd_remediator_incidents', { state: 'awaiting-replacement' })).toBe(1);
    expect(valueOf(scrape, 'etcd_remediator_incidents', { state: 'open' })).toBeUndefined();

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.stderr() + service.stdout()).not.toContain(TOKEN);
  });

  describe.skipIf(fullDiskUnavailable !== undefined)('on a disk that fills up', () => {
    let disk: SmallDisk;
    beforeAll(() => {
      disk = smallDisk();
    });
    afterAll(() => disk?.remove());

    it('/healthz says 503 and why once the state file refuses writes, and 200 again once it takes them, with no incident open', async () => {
      const config = path.join(dir, 'full.json');
      fs.writeFileSync(
        config,
        JSON.stringify({
          state: path.join(disk.dir, 'state.sqlite'),
          listen: '127.0.0.1:0',
          token: TOKEN,
          clusters: [{ clusterId: 'lab', endpoints: lab.endpoints() }],
        }),
      );
      const service = startCli(['run', '--config', config]);
      services.push(service);
      const [, base] = await service.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)\/events/);
      expect((await fetch(`${base!}/healthz`)).status).toBe(200);
      disk.fill();
      // A refusal to keep is a write: the full disk refuses it.
      expect((await fetch(`${base!}/events`, { method: 'POST', body: '{"clusterId":"lab"}', headers: bearer })).status).toBe(500);
      const sick = await fetch(`${base!}/healthz`);
      expect(sick.status).toBe(503);
      expect(await sick.text()).toMatch(/^the state file refuses writes since \S+: state file \S+: cannot write: disk full \(SQLITE_FULL\)\n$/);
      // Space again, and no incident open to write: the service finds out by itself, and says so.
      disk.free();
      await service.waitForStderr(/state file takes writes again after/, 20_000);
      expect((await fetch(`${base!}/healthz`)).status).toBe(200);
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
    });
  });
});
