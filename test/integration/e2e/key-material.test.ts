// Key material never leaves its files: the seed case over mTLS through the real CLI processes
// (remediate, and run with a config and a bearer token), with the runtime's Powertools logs at
// DEBUG, and through Kubernetes with a distinctive kubeconfig token. Everything a user or an
// operator can see afterwards is searched for the secrets: stdout and stderr of every process, the
// state file's incidents, journal and dead letters (status --json and the store itself), and the
// SQLite files byte for byte.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_LEVEL_ENV } from '../../../infra/cli/log-level.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { KUBE_CALL_TIMEOUT_MS } from './pipeline.ts';
import { CAPI_CLUSTER, startKubeWorld, type KubeWorld, type KubeWorldOptions } from '../kube/kube-world.ts';
import { killService, runCli, startCli, type CliRun, type Service } from '../cli/support.ts';
import { startedAhead } from './started-ahead.ts';
import { startTlsCluster, type TlsCluster } from './tls-cluster.ts';

const DEBUG = { env: { [LOG_LEVEL_ENV]: 'DEBUG' }, timeoutMs: 90_000 };
const LAB = ['--election-timeout', '500ms', '--timeout', '2s', '--backoff', '300ms'];
const KUBE_TOKEN = 'kt-SECRET-9f2c71d0e4b84a3c8e5f6a7b1c2d3e4f';
const RUN_TOKEN = 'rt-SECRET-0a1b2c3d4e5f60718293a4b5c6d7e8f9';

/**
 * What must never appear: each base64 line of each PEM file (not only its BEGIN header), and the
 * file as one base64 string, as hex and as the byte list JSON.stringify makes of a Buffer.
 */
function secretsOf(files: string[]): string[] {
  return files.flatMap((file) => {
    const data = fs.readFileSync(file);
    const lines = data
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length >= 16 && !l.startsWith('-----'));
    expect(lines.length, `${file} has a PEM body`).toBeGreaterThan(0);
    // The search would find them: each line is in the file it came from.
    for (const line of lines) expect(data.toString('utf8')).toContain(line);
    const body = Buffer.from(lines.join(''), 'base64');
    return [
      ...lines,
      data.toString('base64').slice(0, 40),
      data.subarray(0, 24).toString('hex'),
      `[${[...data.subarray(0, 16)].join(',')}`,
      body.subarray(0, 24).toString('hex'),
      `[${[...body.subarray(0, 16)].join(',')}`,
    ];
  });
}

/**
 * Everything the state file holds, as status shows it and as the store reads it, and its bytes.
 * The store is read first, so the three kinds of status (the list, each incident, the dead
 * letters) run at once: each is a process of its own, and one after another they were a second
 * and more of every case.
 */
async function stateText(state: string): Promise<string> {
  const store = openSqliteStore({ path: state });
  const parts: string[] = [];
  let stored: string[];
  try {
    const incidents = await store.listIncidents();
    stored = incidents.map((i) => i.incidentId);
    parts.push(JSON.stringify(incidents));
    for (const i of incidents) parts.push(JSON.stringify(await store.journal(i.incidentId)));
    parts.push(JSON.stringify(await store.listDeadLetters()));
  } finally {
    await store.close();
  }
  const [status, dead, ...each] = await Promise.all([
    runCli(['status', '--state', state, '--json']),
    runCli(['status', '--state', state, '--dead-letters', '--json']),
    ...stored.map((id) => runCli(['status', id, '--state', state, '--json'])),
  ]);
  expect(status.code, status.stderr).toBe(0);
  const ids = (JSON.parse(status.stdout) as { incidents: { incidentId: string }[] }).incidents.map((i) => i.incidentId);
  expect(ids.length).toBeGreaterThan(0);
  // status names the incidents the store holds: each was shown on its own above.
  expect([...ids].sort()).toEqual([...stored].sort());
  parts.push(status.stdout, status.stderr);
  for (const one of each) {
    expect(one.code, one.stderr).toBe(0);
    parts.push(one.stdout);
  }
  expect(dead.code, dead.stderr).toBe(0);
  parts.push(dead.stdout);
  for (const file of [state, `${state}-wal`, `${state}-journal`]) if (fs.existsSync(file)) parts.push(fs.readFileSync(file).toString('latin1'));
  return parts.join('\n');
}

function expectNone(secrets: string[], where: string, text: string): void {
  expect(text.length, `${where} was captured`).toBeGreaterThan(0);
  for (const secret of secrets) expect(text.includes(secret), `${where} holds ${secret}`).toBe(false);
}

/**
 * A certificate or key minted in memory is known to no test, so its shapes are looked for: PEM
 * (as text, hex and a Buffer's JSON byte list), and DER (a SEQUENCE of a key, 02 01 00, or of a
 * certificate, 30 82 … a0 03 02 01 02) as base64, hex and a Buffer's JSON byte list.
 */
const KEY_SHAPES = [
  /-----BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)-----/,
  /2d2d2d2d2d424547494e/i,
  /\[45,45,45,45,45,66,69,71,73,78/,
  /MII[A-Za-z0-9+/]{60,}/,
  /30820[0-9a-f]{3}(020100|30820[0-9a-f]{3}a003020102)/i,
  /\[48,130,\d{1,3},\d{1,3},(2,1,0|48,130)/,
];

function expectNoKeyShapes(where: string, text: string): void {
  for (const shape of KEY_SHAPES) expect(shape.exec(text)?.[0], `${where} holds key material`).toBeUndefined();
}

const outputOf = (run: CliRun | Service): string => ('child' in run ? run.stdout() + run.stderr() : run.stdout + run.stderr);

/** The leader the cluster agrees on, waited for as the lab's waitForLeader does (one started ahead may be electing). */
const agreedLeader = (c: TlsCluster) => waitFor(() => c.leader(), { timeoutMs: 10_000, what: 'an agreed leader' });

/** A kube world whose kubeconfig is written to a file of its own directory, for the CLI's --kubeconfig. */
interface KubeRig {
  world: KubeWorld;
  dir: string;
  kubeconfig: string;
}

async function startKubeRig(options: Omit<KubeWorldOptions, 'kubeconfigFile'>): Promise<KubeRig> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'key-material-kube-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  try {
    return { world: await startKubeWorld(3, { ...options, kubeconfigFile: kubeconfig }), dir, kubeconfig };
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function stopKubeRig(rig: KubeRig): Promise<void> {
  await rig.world.down();
  fs.rmSync(rig.dir, { recursive: true, force: true });
}

describe('key material stays in its files', () => {
  let cluster: TlsCluster | undefined;
  let rig: KubeRig | undefined;
  let service: Service | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await killService(service);
    await cluster?.down();
    if (rig) await stopKubeRig(rig);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    [cluster, rig, service, dir] = [undefined, undefined, undefined, undefined];
  });
  // Each case's own, all four started at once from the start of the file (started-ahead.ts): a boot
  // is mostly waiting on an election, little work, and a case waits for its own alone. Each case
  // removes a member, and by then its cluster has been connected for the ~5 s etcd wants before it
  // takes a removal, or most of them: the kube worlds' cases remove one at once.
  const ahead = <T>(start: () => Promise<T>, stop: (started: T) => Promise<void>) => startedAhead(1, start, stop, { beginNow: true });
  const seedCluster = ahead(
    () => startTlsCluster(),
    (c) => c.down(),
  );
  const runCluster = ahead(
    () => startTlsCluster(),
    (c) => c.down(),
  );
  const tokenRig = ahead(() => startKubeRig({ token: KUBE_TOKEN }), stopKubeRig);
  const tlsRig = ahead(() => startKubeRig({ tls: true }), stopKubeRig);

  it('remediate: the seed case over mTLS, logs at DEBUG', async () => {
    const c = (cluster = await seedCluster.take());
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'key-material-'));
    const secrets = secretsOf([c.certs.caFile, c.certs.certFile, c.certs.keyFile]);
    const tls = ['--cacert', c.certs.caFile, '--cert', c.certs.certFile, '--key', c.certs.keyFile];
    const state = path.join(dir, 'state.sqlite');
    const leader = await agreedLeader(c);
    await leader.proxy.setMode('cut');

    // At once, each a process of its own: probe and plan look while remediate waits out its grace
    // window (nothing changes in the cluster before it ends), and the wrong certificate is refused
    // before it is used.
    const [probe, plan, run, refused] = await Promise.all([
      runCli(['probe', '--endpoints', c.endpoints().join(','), ...tls, '--json'], DEBUG),
      runCli(['plan', '--endpoints', c.endpoints().join(','), ...tls, '--target', leader.name, '--grace', '3s'], DEBUG),
      runCli(
        ['remediate', '--endpoints', c.endpoints().join(','), ...tls, ...LAB, '--target', leader.name, '--grace', '3s', '--state', state, '--json'],
        DEBUG,
      ),
      // A wrong client certificate: the message names the file, not its contents.
      runCli(['probe', '--endpoints', c.endpoints()[1]!, '--cacert', c.certs.caFile, '--cert', c.certs.caFile, '--key', c.certs.keyFile], DEBUG),
    ]);
    expect(run.code, run.stderr).toBe(6);
    expect(run.stderr).toContain('LEADER_UNREACHABLE_PAST_GRACE');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--key ${c.certs.keyFile}: does not match the certificate in --cert ${c.certs.caFile}`);

    for (const [where, r] of Object.entries({ probe, plan, remediate: run, refused })) expectNone(secrets, where, outputOf(r));
    expectNone(secrets, 'the state file', await stateText(state));
  }, 120_000);

  it('run with a config: the seed case over mTLS posted with a bearer token, logs at DEBUG, and a dead letter', async () => {
    const c = (cluster = await runCluster.take());
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'key-material-run-'));
    const secrets = [...secretsOf([c.certs.caFile, c.certs.certFile, c.certs.keyFile]), RUN_TOKEN];
    for (const [name, from] of [
      ['ca.pem', c.certs.caFile],
      ['client.pem', c.certs.certFile],
      ['client-key.pem', c.certs.keyFile],
    ] as const)
      fs.copyFileSync(from, path.join(dir, name));
    fs.writeFileSync(path.join(dir, 'run.token'), `${RUN_TOKEN}\n`, { mode: 0o600 });
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        state: 'state.sqlite',
        listen: '127.0.0.1:0',
        tokenFile: 'run.token',
        clusters: [
          {
            clusterId: 'prod',
            endpoints: c.endpoints(),
            tls: { cacert: 'ca.pem', cert: 'client.pem', key: 'client-key.pem' },
            // Three election timeouts of grace, as the lab's pipelines have it: the case is the secrets, not the wait.
            policy: { grace: '1500ms', electionTimeout: '500ms', callTimeout: '2s', backoff: { base: '300ms' } },
          },
        ],
      }),
    );
    const s = (service = startCli(['run', '--config', config], { env: DEBUG.env }));
    const [, url] = await s.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/events)/, 30_000);
    const leader = await agreedLeader(c);
    await leader.proxy.setMode('cut');
    const post = (body: unknown, token = RUN_TOKEN) =>
      fetch(url!, { method: 'POST', body: JSON.stringify(body), headers: { authorization: `Bearer ${token}` } });

    const accepted = await post({
      clusterId: 'prod',
      target: { memberName: leader.name },
      reason: 'kubelet down',
      source: 'test',
      observedAt: new Date().toISOString(),
    });
    expect(accepted.status, await accepted.clone().text()).toBe(202);
    expect(
      (await post({ clusterId: 'prod', target: { memberName: leader.name }, reason: 'kubelet down', source: 'test', observedAt: 'yesterday' })).status,
    ).toBe(400);
    expect((await post({}, `${RUN_TOKEN.slice(0, -1)}0`)).status).toBe(401);
    await s.until(() => (/"outcome":"awaiting-replacement"/.test(s.stdout()) ? true : undefined), 'run to report the remediation', 60_000);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);

    expectNone(secrets, 'run', outputOf(s));
    expectNone(secrets, 'the state file', await stateText(path.join(dir, 'state.sqlite')));
  }, 120_000);

  it("through Kubernetes: the kubeconfig's token is sent to the API server and appears nowhere else", async () => {
    rig = await tokenRig.take();
    const { world: w, kubeconfig } = rig;
    expect(fs.readFileSync(kubeconfig, 'utf8')).toContain(KUBE_TOKEN);
    const state = path.join(rig.dir, 'state.sqlite');
    const leader = await w.lab.waitForLeader();
    w.fake.kubeletDown(leader.name);

    const probe = await runCli(['probe', '--kubeconfig', kubeconfig, '--cluster', CAPI_CLUSTER, ...LAB, '--json'], DEBUG);
    const run = await runCli(
      ['remediate', '--kubeconfig', kubeconfig, '--cluster', CAPI_CLUSTER, '--machine', w.machineOf(leader), ...LAB, '--state', state, '--json'],
      DEBUG,
    );
    expect(run.code, run.stderr).toBe(6);
    // The token was used: the fake saw it on its requests.
    expect(w.fake.bearerRequests).toBeGreaterThan(0);

    for (const [where, r] of Object.entries({ probe, remediate: run })) expectNone([KUBE_TOKEN], where, outputOf(r));
    expectNone([KUBE_TOKEN], 'the state file', await stateText(state));
  }, 120_000);

  it("through Kubernetes over TLS: certificates minted from the <cluster>-etcd Secret, neither the CA's key nor a minted key shown anywhere", async () => {
    rig = await tlsRig.take();
    const { world: w, kubeconfig } = rig;
    const pki = w.lab.tls!;
    // The CA as the Secret holds it; the test's own client certificate is not given to the product.
    const secrets = secretsOf([pki.caFile, pki.caKeyFile]);
    const state = path.join(rig.dir, 'state.sqlite');
    const leader = await w.lab.waitForLeader();
    const follower = w.lab.members.find((m) => m.name !== leader.name)!;
    w.fake.kubeletDown(follower.name);
    const kube = ['--kubeconfig', kubeconfig, '--cluster', CAPI_CLUSTER, '--paths', 'port-forward', '--timeout', `${KUBE_CALL_TIMEOUT_MS}ms`];

    // Over port-forward only: every member that answers was reached with a minted certificate.
    const probe = await runCli(['probe', ...kube, '--json'], DEBUG);
    expect(probe.code, probe.stderr).toBe(0);
    const view = JSON.parse(probe.stdout) as { members: { name: string; paths: { reachability: string }[] }[] };
    expect(
      view.members
        .filter((m) => m.paths.some((p) => p.reachability === 'ok'))
        .map((m) => m.name)
        .sort(),
    ).toEqual(
      w.lab.members
        .filter((m) => m !== follower)
        .map((m) => m.name)
        .sort(),
    );
    const run = await runCli(['remediate', ...kube, ...LAB, '--machine', w.machineOf(follower), '--state', state, '--json'], DEBUG);
    expect(run.code, run.stderr).toBe(6);
    expect(w.fake.requestCount('GET', `/namespaces/default/secrets/${w.tls!.secretName}`)).toBeGreaterThan(0);

    for (const [where, r] of Object.entries({ probe, remediate: run })) {
      expectNone(secrets, where, outputOf(r));
      expectNoKeyShapes(where, outputOf(r));
    }
    const stored = await stateText(state);
    expectNone(secrets, 'the state file', stored);
    expectNoKeyShapes('the state file', stored);
  }, 120_000);
});
