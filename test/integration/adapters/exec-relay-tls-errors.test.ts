// The relay's etcdctl, run for real against an etcd that requires client certificates: the TLS
// failures it names read as TLS failures, never as `refused`. etcdctl 3.4 (grpc-go 1.26) cannot
// name a client certificate the member turns away after a TLS 1.3 handshake: it says "connection
// closed" or "connection reset by peer", as for a member that dropped the connection, so those
// cases run on etcdctl 3.5 and later (Kubernetes' etcd images), which names the alert when it
// wins a race with that reset, and the 3.5 texts are checked as they are printed.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureFromStderr } from '../../../functions/adapters/kube/exec-relay/exec-relay-errors.ts';
import { endpointStatusArgv, type EtcdctlTlsPaths } from '../../../functions/adapters/kube/exec-relay/exec-relay-etcdctl.ts';
import type { EtcdFailure } from '../../../functions/core/common/types.ts';
import { makeCerts, startSingleEtcd, type CertSet, type SingleEtcd } from './single-etcd.ts';

const run = promisify(execFile);
const ETCDCTL = process.env.ETCDCTL_BIN ?? 'etcdctl';

/** The relay's `endpoint status` argv, run here with this machine's etcdctl; its failure as the relay reads it. */
async function relayStatusFailure(endpoint: string, tls: EtcdctlTlsPaths | null): Promise<EtcdFailure> {
  const [, ...args] = endpointStatusArgv({ endpoint, commandTimeoutMs: 1_500, dialTimeoutMs: 1_500, tls, binary: ETCDCTL });
  try {
    await run(ETCDCTL, args, { env: { ...process.env, ETCDCTL_API: '3' } });
  } catch (error) {
    const failed = error as { stderr?: string; code?: number | null };
    return failureFromStderr(failed.stderr ?? '', typeof failed.code === 'number' ? failed.code : null);
  }
  throw new Error(`etcdctl endpoint status ${endpoint} unexpectedly succeeded`);
}

/** etcdctl's major.minor, e.g. 3.4. */
function etcdctlVersion(): number {
  const printed = execFileSync(ETCDCTL, ['version'], { encoding: 'utf8', env: { ...process.env, ETCDCTL_API: '3' } });
  const matched = /etcdctl version: (\d+\.\d+)/.exec(printed);
  if (!matched) throw new Error(`no version in: ${printed}`);
  return Number(matched[1]);
}

const paths = (certs: CertSet, client: CertSet = certs): EtcdctlTlsPaths => ({ cacert: certs.caFile, cert: client.certFile, key: client.keyFile });

describe("the relay's etcdctl against a member with --client-cert-auth", () => {
  let dir: string;
  let certs: CertSet;
  let other: CertSet;
  let etcd: SingleEtcd;
  let plain: SingleEtcd;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'relay-tls-'));
    certs = await makeCerts(dir, 'etcd');
    other = await makeCerts(dir, 'other');
    [etcd, plain] = await Promise.all([startSingleEtcd({ certs }), startSingleEtcd()]);
  });
  afterAll(async () => {
    await Promise.all([etcd?.stop(), plain?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [
      "the member's certificate is not signed by the given CA",
      () => relayStatusFailure(etcd.endpoint, paths(other, certs)),
      /x509: certificate signed by unknown authority/,
    ],
    ['TLS to a plain port', () => relayStatusFailure(plain.endpoint.replace('http://', 'https://'), paths(certs)), /authentication handshake failed/],
  ])('%s: tls', async (_case, failure, text) => {
    const got = await failure();
    expect(got.kind, got.message).toBe('tls');
    expect(got.message).toMatch(text);
  });

  // etcdctl 3.5 names the alert when it reads before it writes; when its write of the HTTP/2
  // preface meets the reset first, it says only "connection reset by peer", as 3.4 always does.
  // So it is asked a few times: the alert it names must read as tls, and a run that lost the race
  // is the reset every version reads as refused, nothing else.
  it.runIf(etcdctlVersion() >= 3.5)('a client certificate from another CA: tls whenever etcdctl names the alert (3.5 and later)', async () => {
    const ALERT = /tls: (bad certificate|unknown certificate authority|certificate required)/;
    const runs: EtcdFailure[] = [];
    while (runs.length < 5 && !runs.some((r) => ALERT.test(r.message))) runs.push(await relayStatusFailure(etcd.endpoint, paths(certs, other)));
    const named = runs.filter((r) => ALERT.test(r.message));
    expect(named.length, JSON.stringify(runs)).toBeGreaterThan(0);
    for (const run of named) expect(run.kind, run.message).toBe('tls');
    for (const run of runs.filter((r) => !ALERT.test(r.message)))
      expect([run.kind, run.message]).toEqual(['refused', expect.stringMatching(/connection reset by peer|connection closed/)]);
  });

  it('a member that is not there is still refused', async () => {
    await plain.stop();
    const got = await relayStatusFailure(plain.endpoint, null);
    expect(got.kind, got.message).toBe('refused');
  });
});

/** One zap warning line and the closing line, as etcdctl 3.5 prints a failed `endpoint status`. */
const etcdctl35 = (error: string): string =>
  `${JSON.stringify({ level: 'warn', ts: '2026-12-01T18:20:36.895Z', logger: 'etcd-client', caller: 'v3@v3.5.16/retry_interceptor.go:63', msg: 'retrying of unary invoker failed', target: 'etcd-endpoints://0xc0003a8000/10.0.0.12:2379', attempt: 0, error })}\n` +
  'Failed to get the status of endpoint https://10.0.0.12:2379 (context deadline exceeded)\n';

describe('etcdctl 3.5 TLS texts', () => {
  it.each([
    'rpc error: code = DeadlineExceeded desc = latest balancer error: last connection error: connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"',
    'rpc error: code = DeadlineExceeded desc = latest balancer error: last connection error: connection error: desc = "error reading server preface: remote error: tls: bad certificate"',
    'rpc error: code = DeadlineExceeded desc = latest balancer error: last connection error: connection error: desc = "error reading server preface: remote error: tls: certificate required"',
    'rpc error: code = DeadlineExceeded desc = latest balancer error: last connection error: connection error: desc = "error reading server preface: remote error: tls: unknown certificate authority"',
    'rpc error: code = Unavailable desc = connection error: desc = "transport: authentication handshake failed: remote error: tls: expired certificate"',
  ])('%s', (error) => {
    expect(failureFromStderr(etcdctl35(error), 1).kind).toBe('tls');
  });
});
