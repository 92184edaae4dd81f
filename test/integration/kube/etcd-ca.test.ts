// The etcd CA as Cluster API keeps it, read through the FAKE API server: the Secret
// `<cluster>-etcd`, keys tls.crt and tls.key; each way it cannot be read says what to do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdCaError, readEtcdCa } from '../../../functions/adapters/kube/cluster-api/etcd-ca.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBca\n-----END CERTIFICATE-----\n';
const KEY_PEM = '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n';

async function problemOf(read: Promise<unknown>): Promise<EtcdCaError> {
  const error: unknown = await read.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof EtcdCaError)) throw new Error(`expected an EtcdCaError, got ${String(error)}`);
  return error;
}

describe('readEtcdCa', () => {
  let fake: KubeApiFake;
  beforeAll(async () => {
    fake = await startKubeApiFake();
    fake.putSecret('team-a', 'wl-etcd', { 'tls.crt': CA_PEM, 'tls.key': KEY_PEM });
    fake.putSecret('team-a', 'half-etcd', { 'tls.crt': CA_PEM });
  });
  afterAll(async () => {
    await fake.stop();
  });

  it('reads tls.crt and tls.key of <cluster>-etcd in the cluster namespace', async () => {
    const ca = await readEtcdCa(fake.kubeConfig(), 'team-a', 'wl');
    expect(ca.cert.toString()).toBe(CA_PEM);
    expect(ca.key.toString()).toBe(KEY_PEM);
    expect(ca.where).toBe('Secret team-a/wl-etcd');
  });

  it('a missing Secret says to create it or give the files', async () => {
    const error = await problemOf(readEtcdCa(fake.kubeConfig(), 'team-b', 'wl'));
    expect(error.problem).toBe('missing');
    expect(error.message).toBe(
      'Secret team-b/wl-etcd does not exist (Cluster API keeps the etcd CA there): create it with keys tls.crt and tls.key, or give --cacert, --cert and --key',
    );
  });

  it('a Secret without the key names the key', async () => {
    const error = await problemOf(readEtcdCa(fake.kubeConfig(), 'team-a', 'half'));
    expect(error.problem).toBe('no-key');
    expect(error.message).toBe('Secret team-a/half-etcd has no "tls.key" key, where Cluster API keeps the etcd CA\'s private key');
  });

  it('a refused read names the RBAC rule it needs', async () => {
    const forbidden = fake.failNext({
      method: 'GET',
      path: /\/namespaces\/team-a\/secrets\/wl-etcd$/,
      status: 403,
      message: 'secrets "wl-etcd" is forbidden: User "system:serviceaccount:x:y" cannot get resource "secrets" in API group "" in the namespace "team-a"',
    });
    const error = await problemOf(readEtcdCa(fake.kubeConfig(), 'team-a', 'wl'));
    expect(forbidden.fired).toBe(1);
    expect(error.problem).toBe('forbidden');
    expect(error.message).toMatch(
      /^reading Secret team-a\/wl-etcd was refused: HTTP 403: secrets "wl-etcd" is forbidden: .* \(RBAC: the identity needs get on secrets in namespace team-a\)$/,
    );
  });

  it('a server error is worth waiting for, and says what the server said', async () => {
    fake.failNext({ method: 'GET', path: /\/secrets\/wl-etcd$/, status: 503, message: 'the server is shutting down' });
    const error = await problemOf(readEtcdCa(fake.kubeConfig(), 'team-a', 'wl'));
    expect(error.problem).toBe('unreachable');
    expect(error.message).toBe('reading Secret team-a/wl-etcd failed: HTTP 503: the server is shutting down');
  });
});
