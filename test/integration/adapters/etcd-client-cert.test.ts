// Client certificates minted from an etcd CA, as KCP mints them, against a real etcd that runs
// with --client-cert-auth: one from its CA is let in, one from another CA is turned away and
// reads as a TLS failure. The CA key comes as Cluster API stores it: PKCS#1 for RSA, SEC1 for EC.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemberClient } from '../../../functions/adapters/etcd/member-client.ts';
import { CLIENT_CERT_CN, mintClientCertificate, UnusableCaError } from '../../../functions/adapters/kube/etcd-client-cert.ts';
import { failureOf, makeCerts, startSingleEtcd, type CertSet, type SingleEtcd } from './single-etcd.ts';

/** The CA key in the encoding CAPI's util/certs writes: "RSA PRIVATE KEY" or "EC PRIVATE KEY". */
async function capiKeyOf(certs: CertSet, name: string): Promise<Buffer> {
  const key = createPrivateKey(await readFile(join(certs.dir, `${name}-ca.key`)));
  return Buffer.from(key.export({ type: key.asymmetricKeyType === 'rsa' ? 'pkcs1' : 'sec1', format: 'pem' }));
}

describe.each(['rsa', 'ec'] as const)('a certificate minted from an %s etcd CA', (keyType) => {
  let dir: string;
  let certs: CertSet;
  let other: CertSet;
  let etcd: SingleEtcd;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `mint-${keyType}-`));
    certs = await makeCerts(dir, 'etcd', keyType);
    other = await makeCerts(dir, 'other', keyType);
    etcd = await startSingleEtcd({ certs });
  });
  afterAll(async () => {
    await etcd?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('is what KCP mints, but for an hour, and the etcd member lets it in', async () => {
    const caKey = await capiKeyOf(certs, 'etcd');
    expect(caKey.toString()).toContain(keyType === 'rsa' ? 'BEGIN RSA PRIVATE KEY' : 'BEGIN EC PRIVATE KEY');
    const before = Date.now();
    const minted = await mintClientCertificate(certs.files.ca, caKey);
    const cert = new X509Certificate(minted.cert);
    const ca = new X509Certificate(certs.files.ca);
    expect(cert.subject).toBe(`CN=${CLIENT_CERT_CN}`);
    expect(cert.issuer).toBe(ca.subject);
    expect(cert.checkIssued(ca) && cert.verify(ca.publicKey)).toBe(true);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.ca).toBe(false);
    expect(cert.publicKey.asymmetricKeyType).toBe('rsa');
    expect(cert.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(cert.checkPrivateKey(createPrivateKey(minted.key))).toBe(true);
    // Backdated five minutes for a server clock behind ours; an hour from now, not ten years.
    const from = Date.parse(cert.validFrom);
    const to = Date.parse(cert.validTo);
    expect(from).toBeLessThanOrEqual(before - 5 * 60_000 + 1_000);
    expect(from).toBeGreaterThan(before - 5 * 60_000 - 2_000);
    expect(to - Date.now()).toBeLessThanOrEqual(60 * 60_000);
    expect(to - before).toBeGreaterThan(59 * 60_000);
    // The certificate keeps whole seconds.
    expect(Math.abs(minted.notAfter.getTime() - to)).toBeLessThan(1_000);

    const client = createMemberClient({ endpoint: etcd.endpoint, path: 'direct' }, { tls: { ca: certs.files.ca, cert: minted.cert, key: minted.key } });
    try {
      const status = await client.status(2_000);
      expect(status.leaderId).not.toBe('0');
    } finally {
      client.close();
    }
  });

  it('each certificate has a key and a serial of its own', async () => {
    const caKey = await capiKeyOf(certs, 'etcd');
    const [a, b] = await Promise.all([mintClientCertificate(certs.files.ca, caKey), mintClientCertificate(certs.files.ca, caKey)]);
    expect(a.key.equals(b.key)).toBe(false);
    const [ca, cb] = [new X509Certificate(a.cert), new X509Certificate(b.cert)];
    expect(ca.serialNumber).not.toBe(cb.serialNumber);
    expect(ca.serialNumber).toMatch(/^[0-7][0-9A-F]{31}$/);
  });

  it('one minted from another CA is refused by the member, as a TLS failure', async () => {
    const minted = await mintClientCertificate(other.files.ca, await capiKeyOf(other, 'other'));
    const client = createMemberClient({ endpoint: etcd.endpoint, path: 'direct' }, { tls: { ca: certs.files.ca, cert: minted.cert, key: minted.key } });
    try {
      const failure = await failureOf(client.status(2_000));
      expect(failure.kind).toBe('tls');
      expect(failure.message).toMatch(/bad certificate|unknown ca|certificate required/);
    } finally {
      client.close();
    }
  });

  it('a CA whose key is not its own, or a certificate that is no CA, signs nothing', async () => {
    await expect(mintClientCertificate(certs.files.ca, await capiKeyOf(other, 'other'))).rejects.toThrow(
      new UnusableCaError('its private key does not belong to its certificate'),
    );
    await expect(mintClientCertificate(certs.files.cert!, certs.files.key!)).rejects.toThrow(/its certificate is not a CA certificate/);
    await expect(mintClientCertificate(Buffer.from('not a pem'), certs.files.key!)).rejects.toThrow(/its certificate or key is not PEM that parses/);
  });
});
