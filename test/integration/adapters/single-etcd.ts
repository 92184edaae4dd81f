// A minimal single-member etcd for adapter tests: loopback only, free ports, temp data dir, optional mTLS.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { EtcdFailure } from '../../../functions/core/common/types.ts';
import { EtcdCallError, type TlsFiles } from '../../../functions/ports/etcd.ts';
import { WaitAborted, waitFor } from '../../../functions/lib/wait-for.ts';

const run = promisify(execFile);
const ETCD = process.env.ETCD_BIN ?? 'etcd';
const ETCDCTL = process.env.ETCDCTL_BIN ?? 'etcdctl';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface CertSet {
  dir: string;
  files: TlsFiles;
  caFile: string;
  certFile: string;
  keyFile: string;
}

async function openssl(dir: string, ...args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir });
}

/** A CA and one leaf certificate (server and client use) for 127.0.0.1, signed by it; keys ECDSA P-256, or RSA 2048 as kubeadm makes them. */
export async function makeCerts(dir: string, name: string, keyType: 'ec' | 'rsa' = 'ec'): Promise<CertSet> {
  const newKey = keyType === 'rsa' ? ['-newkey', 'rsa:2048', '-nodes'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(dir, 'req', '-x509', ...newKey, '-subj', `/CN=${name}-ca`, '-days', '1', '-keyout', `${name}-ca.key`, '-out', `${name}-ca.crt`);
  await openssl(dir, 'req', ...newKey, '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
  await writeFile(join(dir, `${name}.ext`), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  await openssl(
    dir,
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${name}-ca.crt`,
    '-CAkey',
    `${name}-ca.key`,
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.crt`,
  );
  const caFile = join(dir, `${name}-ca.crt`);
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  return {
    dir,
    caFile,
    certFile,
    keyFile,
    files: { ca: await readFile(caFile), cert: await readFile(certFile), key: await readFile(keyFile) },
  };
}

export interface SingleEtcd {
  name: string;
  endpoint: string;
  dir: string;
  etcdctl(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startSingleEtcd(options: { certs?: CertSet } = {}): Promise<SingleEtcd> {
  const dir = await mkdtemp(join(tmpdir(), 'etcd-adapter-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const name = 'solo';
  const scheme = options.certs ? 'https' : 'http';
  const endpoint = `${scheme}://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const tlsArgs = options.certs
    ? ['--cert-file', options.certs.certFile, '--key-file', options.certs.keyFile, '--trusted-ca-file', options.certs.caFile, '--client-cert-auth']
    : [];
  const child: ChildProcess = spawn(
    ETCD,
    [
      '--name',
      name,
      '--data-dir',
      join(dir, 'data'),
      '--listen-client-urls',
      endpoint,
      '--advertise-client-urls',
      endpoint,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `${name}=${peer}`,
      '--initial-cluster-state',
      'new',
      '--heartbeat-interval',
      '50',
      '--election-timeout',
      '500',
      '--log-level',
      'error',
      ...tlsArgs,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // 'close' comes once stderr is read to its end: what etcd said before it exited is all there.
  let closed = false;
  child.once('close', () => (closed = true));

  const ctlTls = options.certs ? ['--cacert', options.certs.caFile, '--cert', options.certs.certFile, '--key', options.certs.keyFile] : [];
  const etcdctl = async (...args: string[]): Promise<string> =>
    (await run(ETCDCTL, ['--endpoints', endpoint, '--command-timeout', '2s', ...ctlTls, ...args], { env: { ...process.env, ETCDCTL_API: '3' } })).stdout;

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await waitFor(
      async () => {
        if (closed) throw new WaitAborted(`etcd exited ${child.exitCode}: ${stderr}`);
        const status = JSON.parse(await etcdctl('endpoint', 'status', '-w', 'json')) as { Status: { leader: number } }[];
        return status[0] && status[0].Status.leader !== 0 ? true : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: 'etcd to answer with a leader' },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { name, endpoint, dir, etcdctl, stop };
}

/** Accepts TCP connections and never says a word: a blackholed endpoint. */
export async function startBlackhole(): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An endpoint nobody listens on. */
export async function refusedEndpoint(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

/** A TCP forwarder on a chosen port: lets a test "heal" an endpoint that used to refuse. */
export async function startForwarder(port: number, to: string): Promise<{ stop(): Promise<void> }> {
  const target = new URL(to);
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(Number(target.port), target.hostname);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The normalized failure of a call that must fail with an EtcdCallError. */
export async function failureOf(call: Promise<unknown>): Promise<EtcdFailure> {
  try {
    await call;
  } catch (error) {
    if (error instanceof EtcdCallError) return error.failure;
    throw new Error(`expected an EtcdCallError, got ${String(error)}`, { cause: error });
  }
  throw new Error('call unexpectedly succeeded');
}
