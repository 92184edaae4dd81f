// The fleet's holds seen by every remediator of a cluster, through the real binary on a real etcd
// lab: a pause written from one state file (and into the cluster's etcd) holds `remediate` on
// another state file, holds its `--resume`, and holds `run` on a third; after `resume` each goes
// on. A storm in run's state holds `remediate --resume` on the same file, which once counted only
// the one cluster it was given; `resume --storm` lets it go on.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { jsonOf, killService, runCli, startCli, type Service } from '../cli/support.ts';
import { startedAhead } from '../e2e/started-ahead.ts';

const TOKEN = 'holds-test-token-5d1c9e7a3b2f4086';
// A held incident looks again after a backoff that doubles from its base (100 ms, 200 ms, 400 ms…):
// a short base keeps its next look after a resume near, and retries promptly a removal etcd
// refuses for ~5 s after start.
const LAB_FLAGS = ['--election-timeout', '500ms', '--timeout', '1s', '--backoff', '100ms'];
// run's policy: the same, and capped, so that run looks again within 600 ms of a resume.
const RUN_POLICY = { electionTimeout: '500ms', callTimeout: '1s', backoff: { base: '100ms', cap: '600ms' } };

let dir: string;
let lab: Lab | undefined;
const services: Service[] = [];
// Each case removes a follower, and etcd refuses a removal until the members have been connected
// for ~5 s (e2e/started-ahead.ts). A lab of each case's own, all three started at once from the
// start (a boot is mostly waiting on an election, little work), has served most or all of that
// wait when its case removes; one lab shared by the cases needed a replacement joined after each,
// and the next case waited those seconds out again.
const CASES = 3;
const labs = Array.from({ length: CASES }, () =>
  startedAhead(
    1,
    () => startLab({ members: 3, electionTimeoutMs: 500 }),
    (started) => started.down(),
    { beginNow: true },
  ),
);
let cases = 0;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holds-'));
});
beforeEach(async () => {
  const next = labs[cases++];
  if (!next) throw new Error(`more than ${CASES} cases: start a lab for each`);
  lab = await next.take();
});
afterEach(async () => {
  for (const service of services.splice(0)) await killService(service);
  await lab?.down();
  lab = undefined;
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const theLab = (): Lab => {
  if (!lab) throw new Error('no lab: the case took none');
  return lab;
};
const names = async () => (await theLab().memberList()).map((m) => m.name).sort();
const emptyState = async (name: string) => {
  const file = path.join(dir, name);
  await openSqliteStore({ path: file }).close();
  return file;
};
/**
 * A follower in the member list now: its removal needs no move, so what holds it is the pause
 * alone. The lab was started ahead and may be electing on a loaded machine: the leader it agrees on.
 */
const aFollower = async () => {
  const leader = await theLab().waitForLeader();
  return (await theLab().memberList()).find((m) => m.name !== leader.name && !m.isLearner)!;
};

describe('a pause written from one state file', () => {
  it('holds remediate on another state file, holds its --resume, and after resume it goes on', async () => {
    const before = await names();
    const follower = await aFollower();
    const paused = await emptyState('person.sqlite');
    const access = ['--endpoints', theLab().endpoints().join(','), '--cluster', 'prod'];
    const pause = await runCli(['pause', '--state', paused, ...access, '--why', 'zone b maintenance', '--by', 'ops@box']);
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout).toMatch(
      /^paused cluster prod in state file .*person\.sqlite and in the etcd of cluster prod \(\/etcd-remediator\/holds\/pause\) by ops@box/,
    );

    const other = path.join(dir, 'other.sqlite');
    const common = [...access, ...LAB_FLAGS, '--state', other];
    const first = startCli(['remediate', ...common, '--target', follower.name]);
    services.push(first);
    await first.waitForStderr(/RetryRequested\s+PAUSED/, 30_000);
    expect(first.stderr()).toMatch(/is paused \(kept in etcd key \/etcd-remediator\/holds\/pause, written from state file \S*person\.sqlite/);
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(130);
    const [, incidentId] = /incident (\S+) stays open/.exec(first.stderr()) ?? [];
    expect(incidentId, first.stderr()).toBeDefined();
    expect(await names()).toEqual(before);

    // The command the tool suggests holds too.
    const resumed = startCli(['remediate', ...common, '--resume', incidentId!, '--json']);
    services.push(resumed);
    await resumed.until(
      () => ((resumed.stderr().match(/RetryRequested\s+PAUSED/g) ?? []).length >= 2 ? true : undefined),
      'two PAUSED looks of the resumed incident',
      30_000,
    );
    expect(await names()).toEqual(before);

    const lift = await runCli(['resume', '--state', paused, ...access]);
    expect(lift.code, lift.stderr).toBe(0);
    expect(lift.stdout).toMatch(/^resumed cluster prod in state file .* and in the etcd of cluster prod/);
    expect(await resumed.exited).toBe(6);
    expect(jsonOf<{ incidentId: string; outcome: string }>({ code: 6, stdout: resumed.stdout(), stderr: resumed.stderr() })).toMatchObject({ incidentId });
    expect(await names()).toEqual(before.filter((n) => n !== follower.name));
  }, 120_000);

  it('holds run on a third state file, and after resume run goes on', async () => {
    const before = await names();
    const follower = await aFollower();
    const person = await emptyState('person2.sqlite');
    const access = ['--endpoints', theLab().endpoints().join(','), '--cluster', 'prod'];

    const config = path.join(dir, 'run.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        state: 'run.sqlite',
        listen: '127.0.0.1:0',
        token: TOKEN,
        clusters: [{ clusterId: 'prod', endpoints: theLab().endpoints(), policy: RUN_POLICY }],
      }),
    );
    // run starts while the pause is written; the event is posted once both are done.
    const run = startCli(['run', '--config', config]);
    services.push(run);
    const [pause, [, url]] = await Promise.all([
      runCli(['pause', '--state', person, ...access, '--why', 'upgrade']),
      run.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/events)/),
    ]);
    expect(pause.code, pause.stderr).toBe(0);
    const event = { clusterId: 'prod', target: { memberName: follower.name }, reason: 'kubelet down', source: 'test', observedAt: new Date().toISOString() };
    const posted = await fetch(url!, { method: 'POST', body: JSON.stringify(event), headers: { authorization: `Bearer ${TOKEN}` } });
    expect(posted.status).toBeLessThan(300);
    await run.waitForStderr(/PAUSED/, 30_000);
    expect(await names()).toEqual(before);

    // Lifted in etcd only, from yet another state file: run's own store never held this pause.
    const lift = await runCli(['resume', '--state', await emptyState('third.sqlite'), ...access]);
    expect(lift.code, lift.stderr).toBe(0);
    await run.until(async () => ((await names()).includes(follower.name) ? undefined : true), `${follower.name} to be removed once resumed`, 30_000);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 120_000);
});

describe('a storm in run’s state', () => {
  it('holds remediate --resume on the same file and remediate on another; resume --storm lets it go on', async () => {
    const before = await names();
    const follower = await aFollower();
    // Four clusters, one of them real: two failing within the window are a storm (more than 20% of 4, at least 2).
    const nowhere = ['http://127.0.0.1:1'];
    const policy = RUN_POLICY;
    const config = path.join(dir, 'storm.json');
    const clusters = [
      { clusterId: 'a', endpoints: nowhere, policy },
      { clusterId: 'b', endpoints: theLab().endpoints(), policy },
      { clusterId: 'c', endpoints: nowhere, policy },
      { clusterId: 'd', endpoints: nowhere, policy },
    ];
    fs.writeFileSync(config, JSON.stringify({ state: 'storm.sqlite', listen: '127.0.0.1:0', token: TOKEN, clusters }));
    const state = path.join(dir, 'storm.sqlite');
    const run = startCli(['run', '--config', config]);
    services.push(run);
    const [, url] = await run.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/events)/);
    const send = (clusterId: string, memberName: string) =>
      fetch(url!, {
        method: 'POST',
        body: JSON.stringify({ clusterId, target: { memberName }, reason: 'kubelet down', source: 'test', observedAt: new Date().toISOString() }),
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    expect((await send('a', 'etcd-a1')).status).toBeLessThan(300);
    expect((await send('b', follower.name)).status).toBeLessThan(300);
    const [, shortId] = await run.waitForStderr(/b\/([0-9a-f]{8}) FLEET_STORM/, 30_000);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(await names()).toEqual(before);

    const access = ['--endpoints', theLab().endpoints().join(','), '--cluster', 'b', ...LAB_FLAGS];
    // Both at once, each on its own state file: another state file knows no fleet, and the hold run
    // wrote into b's etcd holds it; the command the tool suggests, on run's own file, is held by
    // the storm its store sees (of 4 registered, not 1).
    const elsewhere = startCli(['remediate', ...access, '--target', follower.name, '--state', path.join(dir, 'elsewhere.sqlite')]);
    services.push(elsewhere);
    const resumed = startCli(['remediate', ...access, '--resume', shortId!, '--state', state]);
    services.push(resumed);
    await Promise.all([
      elsewhere.waitForStderr(
        /RetryRequested\s+FLEET_STORM .*kept in etcd key \/etcd-remediator\/holds\/storm, written from state file \S*storm\.sqlite/,
        30_000,
      ),
      resumed.waitForStderr(/RetryRequested\s+FLEET_STORM \(next look in [^)]*\): Fleet storm since [^(]*: 2 of 4 registered clusters/, 30_000),
    ]);
    elsewhere.child.kill('SIGINT');
    expect(await elsewhere.exited).toBe(130);
    expect(await names()).toEqual(before);

    // The resumed process shares run's state file, and a look of it between resume's end of the
    // storm in that file and its write into etcd finds the hold its store wrote stale and lifts it
    // itself: resume would then find nothing to lift in etcd. It is stopped while resume runs, and
    // goes on at its next look once continued.
    resumed.child.kill('SIGSTOP');
    const ended = await runCli([
      'resume',
      '--storm',
      '--state',
      state,
      '--endpoints',
      theLab().endpoints().join(','),
      '--why',
      'the failures are real',
    ]).finally(() => resumed.child.kill('SIGCONT'));
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout).toMatch(/^storm ended in state file \S*storm\.sqlite and in the etcd of cluster default \(\/etcd-remediator\/holds\/storm\)/);
    expect(await resumed.exited).toBe(6);
    expect(await names()).toEqual(before.filter((n) => n !== follower.name));
  }, 120_000);
});
