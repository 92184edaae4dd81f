// run: the long-running service. An invalid event POSTed to it is refused with 400 naming the
// field, kept as a dead letter that status shows, and SIGTERM stops the service cleanly.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { jsonOf, runCli, startCli, type Service } from './support.ts';

/** The bearer token of the services below; every POST sends it. */
const TOKEN = 'run-test-token-3f9a1c7e5b2d4086';
const post = (url: string, body: string) => fetch(url, { method: 'POST', body, headers: { authorization: `Bearer ${TOKEN}` } });

describe('run', () => {
  let dir: string;
  const services: Service[] = [];
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-'));
  });
  afterAll(async () => {
    for (const service of services) {
      if (service.child.exitCode === null && service.child.signalCode === null) {
        service.child.kill('SIGKILL');
        await service.exited;
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a config with a bad field, naming it', async () => {
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'a', policy: { grace: '1 minute' } }] }));
    const run = await runCli(['run', '--config', file]);
    expect(run.code).toBe(2);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('clusters[0].endpoints: is required');
    expect(run.stderr).toContain('clusters[0].policy.grace: "1 minute" is not a duration');
  });

  it('answers 400 naming the field for an invalid event, dead-letters it, and stops on SIGTERM', async () => {
    const config = path.join(dir, 'config.json');
    // Nothing listens on port 1: only invalid events are sent, so no etcd is needed.
    fs.writeFileSync(
      config,
      JSON.stringify({ state: 'state.sqlite', listen: '127.0.0.1:0', token: TOKEN, clusters: [{ clusterId: 'lab', endpoints: ['http://127.0.0.1:1'] }] }),
    );
    const service = startCli(['run', '--config', config]);
    services.push(service);
    const [, url] = await service.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/events)/);

    const invalid = { clusterId: 'lab', target: { memberName: 'etcd1' }, reason: 'kubelet down', source: 'test', observedAt: 'yesterday' };
    const response = await post(url!, JSON.stringify(invalid));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { accepted: boolean; error: string; field: string; deadLetterId: string };
    expect(body.accepted).toBe(false);
    expect(body.field).toBe('observedAt');
    expect(body.error).toMatch(/observedAt: must be an ISO-8601 timestamp/);

    const unknownCluster = await post(url!, JSON.stringify({ ...invalid, clusterId: 'elsewhere', observedAt: new Date().toISOString() }));
    expect(unknownCluster.status).toBe(400);
    expect(((await unknownCluster.json()) as { field: string }).field).toBe('clusterId');

    const status = await runCli(['status', '--state', path.join(dir, 'state.sqlite'), '--dead-letters', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const { deadLetters } = jsonOf<{ deadLetters: { id: string; source: string; error: string; payload: string }[] }>(status);
    const record = deadLetters.find((d) => d.id === body.deadLetterId);
    expect(record).toMatchObject({ source: 'http', error: body.error });
    expect(JSON.parse(record!.payload)).toMatchObject(invalid);
    expect(deadLetters.some((d) => d.error.includes('clusterId'))).toBe(true);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.stderr()).toContain('SIGTERM: stopping');
    expect(service.stdout()).toBe('');
  });

  /** A service on a cluster nobody answers for: enough for what is refused at the edge. */
  const startService = async (name: string) => {
    const config = path.join(dir, `${name}.json`);
    // Port 1 would answer "connection refused" at once; an incident the tests leave open then retries quietly.
    fs.writeFileSync(
      config,
      JSON.stringify({ state: `${name}.sqlite`, listen: '127.0.0.1:0', token: TOKEN, clusters: [{ clusterId: 'lab', endpoints: ['http://127.0.0.1:1'] }] }),
    );
    const started = startCli(['run', '--config', config]);
    services.push(started);
    const [, url] = await started.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/events)/);
    return { service: started, url: url!, state: path.join(dir, `${name}.sqlite`) };
  };

  const deadLettersIn = async (state: string) => {
    const status = await runCli(['status', '--state', state, '--dead-letters', '--json']);
    expect(status.code, status.stderr).toBe(0);
    return jsonOf<{ deadLetters: { id: string; source: string; error: string; payload: string }[] }>(status).deadLetters;
  };

  const LIMIT = 1 << 20;
  const notJson = JSON.stringify({ clusterId: 'lab', target: { memberName: 'etcd1' }, reason: 'kubelet down', source: 'test', observedAt: 'yesterday' });

  it('answers 413 naming the limit for a body over it, dead-letters its size but not the body, and serves the next request', async () => {
    const { service: s, url, state } = await startService('big-body');
    const big = `{"reason":"${'x'.repeat(LIMIT)}"}`;
    const response = await post(url, big);
    expect(response.status).toBe(413);
    const body = (await response.json()) as { accepted: boolean; error: string; limitBytes: number; deadLetterId: string };
    expect(body).toMatchObject({ accepted: false, limitBytes: LIMIT });
    expect(body.error).toContain(`${big.length} bytes, over the limit of ${LIMIT} bytes`);

    // The server is still there for the next request.
    const next = await post(url, notJson);
    expect(next.status).toBe(400);
    expect(((await next.json()) as { field: string }).field).toBe('observedAt');

    const record = (await deadLettersIn(state)).find((d) => d.id === body.deadLetterId);
    expect(record).toMatchObject({ source: 'http', error: body.error });
    expect(record!.payload).toContain(`${big.length} bytes`);
    expect(record!.payload).not.toContain('xxxx');

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('refuses a stdin line over the limit by its size, and reads the next line', async () => {
    const { service: s, state } = await startService('long-line');
    const long = `{"reason":"${'y'.repeat(LIMIT)}"}`;
    s.child.stdin!.write(`${long}\n${notJson}\n`);
    // Each line is answered on its own, so the two answers may come in either order.
    await s.waitForStderr(/stdin line 2: refused: .*observedAt/);
    const [first] = await s.waitForStderr(/stdin line 1: .*/);
    expect(first).toBe(`stdin line 1: refused: MemberUnhealthy is invalid: (line): is ${long.length} bytes, over the limit of ${LIMIT} bytes`);

    const dead = (await deadLettersIn(state)).filter((d) => d.source === 'stdin');
    expect(dead).toHaveLength(2);
    expect(dead[0]!.payload).toContain(`${long.length} bytes`);
    expect(dead[0]!.payload).not.toContain('yyyy');
    expect(JSON.parse(dead[1]!.payload)).toMatchObject({ observedAt: 'yesterday' });

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  /** Incidents an earlier process left in a state file: `open` stay open, the others are closed. */
  const leaveIncidents = async (name: string, incidents: { clusterId?: string; member: string; closed?: boolean }[]) => {
    const store = openSqliteStore({ path: path.join(dir, `${name}.sqlite`) });
    try {
      const ids: string[] = [];
      for (const { clusterId = 'lab', member, closed } of incidents) {
        const { incident } = await store.openOrJoin({
          clusterId,
          targetKey: `memberName=${member}`,
          target: { memberName: member },
          reason: 'earlier',
          now: Date.now(),
        });
        if (closed) await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: null, now: Date.now() });
        ids.push(incident.incidentId);
      }
      return ids;
    } finally {
      await store.close();
    }
  };

  it('says which open incidents it resumes when it starts, and which it cannot', async () => {
    const [ours, foreign] = await leaveIncidents('resumes', [{ member: 'etcd1' }, { clusterId: 'elsewhere', member: 'etcd2' }]);
    const { service: s } = await startService('resumes');
    expect(s.stderr()).toMatch(new RegExp(`resuming 1 open incident: ${ours} \\(lab, memberName=etcd1, attempt 0\\)`));
    expect(s.stderr()).toMatch(new RegExp(`not resuming ${foreign} \\(cluster elsewhere is not in the config\\)`));
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('answers 409 with a dead letter for an incidentId that is closed or belongs to another target, and 202 for its own', async () => {
    const [closed, open] = await leaveIncidents('conflicts', [{ member: 'etcd1', closed: true }, { member: 'etcd2' }]);
    const { service: s, url, state } = await startService('conflicts');
    const report = (incidentId: string, member: string) =>
      post(
        url,
        JSON.stringify({ incidentId, clusterId: 'lab', target: { memberName: member }, reason: 'again', source: 'test', observedAt: new Date().toISOString() }),
      );
    type Refused = { accepted: boolean; error: string; field: string; deadLetterId: string };

    const late = await report(closed!, 'etcd1');
    expect(late.status).toBe(409);
    const lateBody = (await late.json()) as Refused;
    expect(lateBody).toMatchObject({ accepted: false, field: 'incidentId' });
    expect(lateBody.error).toContain(`incidentId: incident ${closed} is awaiting-replacement already`);

    const elsewhere = await report(open!, 'etcd3');
    expect(elsewhere.status).toBe(409);
    const elsewhereBody = (await elsewhere.json()) as Refused;
    expect(elsewhereBody.error).toContain(`incidentId: incident ${open} is for lab/memberName=etcd2, not lab/memberName=etcd3`);

    const joined = await report(open!, 'etcd2');
    expect(joined.status).toBe(202);
    expect(await joined.json()).toMatchObject({ accepted: true, incidentId: open });

    const dead = await deadLettersIn(state);
    expect(dead.find((d) => d.id === lateBody.deadLetterId)).toMatchObject({ source: 'http', error: lateBody.error });
    expect(dead.find((d) => d.id === elsewhereBody.deadLetterId)).toMatchObject({ source: 'http', error: elsewhereBody.error });

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });
});
