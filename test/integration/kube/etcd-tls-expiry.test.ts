// Certificates out of their validity through Kubernetes: an etcd CA in `<cluster>-etcd` whose
// certificate has expired, and a member whose server certificate has expired (kubeadm's last a
// year) under a CA that is still valid. TLS only says "certificate has expired" for either, so the
// message must say which one, not that the Secret holds another cluster's CA.
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { createPrivateKey, webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeEtcd } from '../../../functions/adapters/kube/kube-etcd.ts';
import type { ProbeSample } from '../../../functions/core/common/types.ts';
import { WaitAborted, waitFor } from '../../../functions/lib/wait-for.ts';
import { freePort } from '../adapters/single-etcd.ts';
import type { KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { accessOf, fakeFor } from './one-pod-fake.ts';

const CALL_MS = 2_000;
const DAY_MS = 86_400_000;
const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };

interface Issued {
  cert: x509.X509Certificate;
  keys: webcrypto.CryptoKeyPair;
}

const pemKey = async (keys: webcrypto.CryptoKeyPair): Promise<string> =>
  // PKCS#1, as Cluster API keeps a CA key.
  createPrivateKey({ key: Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)), format: 'der', type: 'pkcs8' })
    .export({ type: 'pkcs1', format: 'pem' })
    .toString();

async function issue(subject: string, from: Date, to: Date, issuer?: Issued, keys?: webcrypto.CryptoKeyPair): Promise<Issued> {
  const own = keys ?? (await webcrypto.subtle.generateKey(RSA, true, ['sign', 'verify']));
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: '0' + String(Math.floor(Math.random() * 1e9)),
      subject,
      issuer: issuer ? issuer.cert.subject : subject,
      notBefore: from,
      notAfter: to,
      signingAlgorithm: RSA,
      publicKey: own.publicKey,
      signingKey: (issuer ?? { keys: own }).keys.privateKey,
      extensions: issuer
        ? [
            new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }]),
            new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
          ]
        : [
            new x509.BasicConstraintsExtension(true, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
          ],
    },
    webcrypto,
  );
  return { cert, keys: own };
}

/** A single etcd serving clients over TLS with the given files, ready once its port hands over a certificate. */
async function startExpiredEtcd(
  dir: string,
  files: { caFile: string; certFile: string; keyFile: string },
): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const endpoint = `https://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = spawn(
    process.env.ETCD_BIN ?? 'etcd',
    [
      '--name',
      'solo',
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
      `solo=${peer}`,
      '--initial-cluster-state',
      'new',
      '--log-level',
      'error',
      '--cert-file',
      files.certFile,
      '--key-file',
      files.keyFile,
      '--trusted-ca-file',
      files.caFile,
      '--client-cert-auth',
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  const handsOverCertificate = (): Promise<true | undefined> =>
    new Promise((resolve) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: clientPort, rejectUnauthorized: false }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(undefined));
    });
  try {
    await waitFor(() => (child.exitCode !== null ? Promise.reject(new WaitAborted(`etcd exited ${child.exitCode}`)) : handsOverCertificate()), {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'etcd to serve TLS',
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, stop };
}

describe('etcd certificates out of their validity, through port-forward', () => {
  let dir: string;
  let etcd: { endpoint: string; stop(): Promise<void> };
  let fake: KubeApiFake;
  const opened: { close(): Promise<void> }[] = [];
  const probe = async (clusterName: string): Promise<ProbeSample> => {
    const kube = createKubeEtcd(accessOf(fake, clusterName), { guardPrefix: '/etcd-remediator-test', callTimeoutMs: CALL_MS });
    opened.push(kube);
    return kube.prober.probe({ seeds: [], deadlineMs: 2 * CALL_MS, paths: ['port-forward'] });
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-tls-expiry-'));
    const now = Date.now();
    const ca = await issue('CN=etcd-ca', new Date(now - DAY_MS), new Date(now + 365 * DAY_MS));
    // The same CA, its certificate lapsed: what a Secret holds when the CA was never renewed.
    const lapsedCa = await issue('CN=etcd-ca', new Date('2020-01-01T00:00:00Z'), new Date('2021-01-01T00:00:00Z'), undefined, ca.keys);
    const earlyCa = await issue('CN=etcd-ca', new Date('2099-01-01T00:00:00Z'), new Date('2100-01-01T00:00:00Z'), undefined, ca.keys);
    const server = await issue('CN=cp-1', new Date(now - 400 * DAY_MS), new Date(now - DAY_MS), ca);
    const files = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
    await writeFile(files.caFile, ca.cert.toString('pem'));
    await writeFile(files.certFile, server.cert.toString('pem'));
    await writeFile(files.keyFile, await pemKey(server.keys));
    // etcd serves with an expired certificate (Go's server does not check its own).
    etcd = await startExpiredEtcd(dir, files);
    fake = await fakeFor(etcd);
    const caKey = await pemKey(ca.keys);
    fake.putSecret('default', 'wl-etcd', { 'tls.crt': ca.cert.toString('pem'), 'tls.key': caKey });
    fake.putSecret('default', 'lapsed-etcd', { 'tls.crt': lapsedCa.cert.toString('pem'), 'tls.key': caKey });
    fake.putSecret('default', 'early-etcd', { 'tls.crt': earlyCa.cert.toString('pem'), 'tls.key': caKey });
  });
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((kube) => kube.close()));
    await fake?.stop();
    await etcd?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('an etcd CA whose certificate has expired: nothing is minted from it, and the message says so', async () => {
    const sample = await probe('lapsed');
    expect(sample.listFailures.map((f) => f.reachability)).toEqual(['tls']);
    const message = sample.listFailures[0]!.failure!.message;
    expect(message).toBe(
      'Secret default/lapsed-etcd holds no etcd CA a client certificate can be minted from: its certificate expired on 2021-01-01T00:00:00.000Z; renew the etcd CA',
    );
  });

  it('an etcd CA not valid yet: nothing is minted from it, and the message says from when', async () => {
    const sample = await probe('early');
    expect(sample.listFailures[0]!.failure!.message).toBe(
      "Secret default/early-etcd holds no etcd CA a client certificate can be minted from: its certificate is not valid before 2099-01-01T00:00:00.000Z; check this machine's clock",
    );
  });

  it('a member whose server certificate has expired: the message says that, not that the Secret holds another CA', async () => {
    const sample = await probe('wl');
    expect(sample.listFailures.map((f) => f.reachability)).toEqual(['tls']);
    const message = sample.listFailures[0]!.failure!.message;
    expect(message).toContain('certificate has expired');
    expect(message).not.toContain('not signed by');
    expect(message).toContain("(the member's server certificate has expired or is not yet valid, though the etcd CA in Secret default/wl-etcd is valid until ");
    expect(message).toContain("renew the member's server certificate (kubeadm certs renew etcd-server)");
  });
});
