// Which file a TLS failure points at: said after etcd's (grpc-js's) own words, naming the flag or
// config field and the path as the user wrote them.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tlsHint } from '../../../../functions/adapters/etcd/tls-hint.ts';

const flags = { ca: '--cacert /etc/ca.pem', cert: '--cert /etc/client.pem', key: '--key /etc/client-key.pem' };

describe('tlsHint', () => {
  it.each([
    ['Error: unable to verify the first certificate', "the server's certificate is not signed by the CA in --cacert /etc/ca.pem: fix --cacert /etc/ca.pem"],
    [
      'Error: self-signed certificate in certificate chain',
      "the server's certificate is not signed by the CA in --cacert /etc/ca.pem: fix --cacert /etc/ca.pem",
    ],
    [
      'ssl3_read_bytes:ssl/tls alert bad certificate:SSL alert number 42',
      'the server refused the client certificate --cert /etc/client.pem (with --key /etc/client-key.pem): it is not signed by a CA the server trusts; fix --cert /etc/client.pem',
    ],
    [
      'ssl/tls alert unknown ca',
      'the server refused the client certificate --cert /etc/client.pem (with --key /etc/client-key.pem): it is not signed by a CA the server trusts; fix --cert /etc/client.pem',
    ],
    ["Hostname/IP does not match certificate's altnames", "the server's certificate does not name this endpoint's host; the CA is --cacert /etc/ca.pem"],
    ['wrong version number', 'check --cacert /etc/ca.pem, --cert /etc/client.pem, --key /etc/client-key.pem'],
  ])('%s', (message, hint) => {
    expect(tlsHint(message, flags)).toBe(hint);
  });

  it('without a client certificate, says one is needed', () => {
    expect(tlsHint('alert certificate required', { ca: 'clusters[0].tls.cacert ca.pem' })).toBe(
      'the server requires a client certificate: give --cert and --key (or tls.cert and tls.key)',
    );
  });
});

describe('tlsHint for a certificate out of its validity', () => {
  // A CA valid for a day from now (openssl, as an operator would make one).
  const dir = mkdtempSync(join(tmpdir(), 'tls-hint-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=hint-ca',
      '-days',
      '1',
      '-keyout',
      join(dir, 'ca.key'),
      '-out',
      join(dir, 'ca.crt'),
    ],
    { stdio: 'ignore' },
  );
  const caPem = readFileSync(join(dir, 'ca.crt'));
  const validTo = new Date(new X509Certificate(caPem).validTo);
  rmSync(dir, { recursive: true, force: true });

  it('with the CA given still valid, blames the server certificate and says how to renew it', () => {
    expect(tlsHint('Error: certificate has expired', flags, caPem)).toBe(
      `the server's certificate has expired or is not yet valid (the CA in --cacert /etc/ca.pem is valid until ${validTo.toISOString()}): renew it (kubeadm certs renew etcd-server), or check the clocks`,
    );
  });

  it('with the CA given expired, names the CA and when it expired', () => {
    const later = new Date(validTo.getTime() + 86_400_000);
    expect(tlsHint('CERT_HAS_EXPIRED', flags, caPem, later)).toBe(
      `the CA in --cacert /etc/ca.pem expired on ${validTo.toISOString()}: renew the etcd CA and give the new one`,
    );
  });

  it('a client certificate the server refused as expired is the client certificate', () => {
    expect(tlsHint('ssl/tls alert certificate expired', flags, caPem)).toContain('the server refused the client certificate --cert /etc/client.pem');
  });
});
