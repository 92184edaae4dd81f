// etcd over TLS through Kubernetes, as kubeadm runs it (--client-cert-auth) behind the FAKE API
// server's port-forward: the client certificate is minted from the cluster's etcd CA in the Secret
// `<cluster>-etcd`, the operator's files override it, and every TLS failure reads as one, naming
// what to fix, never as `refused`.
import { createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKubeEtcd } from '../../../functions/adapters/kube/kube-etcd.ts';
import { credentialProblem } from '../../../functions/core/view/credentials.ts';
import type { ProbeSample } from '../../../functions/core/common/types.ts';
import type { KubeAccessConfig } from '../../../functions/ports/kube-access.ts';
import { makeCerts, startSingleEtcd, type CertSet, type SingleEtcd } from '../adapters/single-etcd.ts';
import type { KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { accessOf, fakeFor } from './one-pod-fake.ts';

const POD = 'kube-system/etcd-cp-1:2379';
const CALL_MS = 2_000;

/** The CA as Cluster API keeps it: tls.crt, and tls.key in PKCS#1. */
async function caSecret(certs: CertSet, name: string): Promise<Record<string, string>> {
  const key = createPrivateKey(await readFile(join(certs.dir, `${name}-ca.key`)));
  return { 'tls.crt': certs.files.ca.toString(), 'tls.key': key.export({ type: 'pkcs1', format: 'pem' }).toString() };
}

describe('etcd over TLS through port-forward', () => {
  let dir: string;
  let certs: CertSet;
  let other: CertSet;
  let etcd: SingleEtcd;
  let plain: SingleEtcd;
  let fake: KubeApiFake;
  let plainFake: KubeApiFake;
  const opened: { close(): Promise<void> }[] = [];
  const kubeEtcd = (access: KubeAccessConfig, tls?: CertSet['files']) => {
    const kube = createKubeEtcd(access, { guardPrefix: '/etcd-remediator-test', callTimeoutMs: CALL_MS, ...(tls ? { tls } : {}) });
    opened.push(kube);
    return kube;
  };
  const probe = (kube: ReturnType<typeof kubeEtcd>): Promise<ProbeSample> => kube.prober.probe({ seeds: [], deadlineMs: 2 * CALL_MS, paths: ['port-forward'] });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-tls-'));
    certs = await makeCerts(dir, 'etcd', 'rsa');
    other = await makeCerts(dir, 'other', 'rsa');
    [etcd, plain] = await Promise.all([startSingleEtcd({ certs }), startSingleEtcd()]);
    [fake, plainFake] = await Promise.all([fakeFor(etcd), fakeFor(plain)]);
    fake.putSecret('default', 'wl-etcd', await caSecret(certs, 'etcd'));
    fake.putSecret('default', 'stale-etcd', await caSecret(other, 'other'));
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((kube) => kube.close()));
  });
  afterAll(async () => {
    await Promise.all([fake?.stop(), plainFake?.stop()]);
    await Promise.all([etcd?.stop(), plain?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('a certificate minted from <cluster>-etcd: the member answers, and the cluster lock is taken through the forward', async () => {
    const kube = kubeEtcd(accessOf(fake, 'wl'));
    const sample = await probe(kube);
    expect(sample.listFailures).toEqual([]);
    expect(sample.members.map((m) => m.paths.map((p) => `${p.path} ${p.endpoint} ${p.reachability}`))).toEqual([[`port-forward ${POD} ok`]]);
    const guard = kube.guard!([{ endpoint: POD, path: 'port-forward' }]);
    expect(await guard.acquire('kube-tls-test', 5_000)).toEqual({ held: true });
    await guard.release('kube-tls-test');
    // The direct path of an https client URL gets a minted certificate too.
    expect((await kube.transport.client({ endpoint: etcd.endpoint, path: 'direct' }).status(CALL_MS)).leaderId).not.toBe('0');
    // The Secret was read once for all of it.
    expect(fake.requestCount('GET', '/namespaces/default/secrets/wl-etcd')).toBe(1);
  });

  it('no <cluster>-etcd Secret: every path fails on TLS, and the block names the Secret', async () => {
    const sample = await probe(kubeEtcd(accessOf(fake, 'bare')));
    expect(sample.members).toEqual([]);
    expect(sample.listFailures.map((f) => f.reachability)).toEqual(['tls']);
    const message = sample.listFailures[0]!.failure!.message;
    expect(message).toContain(
      `port-forward to kube-system/etcd-cp-1: port 2379 in the pod closed the connection without answering plain http: the member serves TLS`,
    );
    expect(message).toContain(
      'Secret default/bare-etcd does not exist (Cluster API keeps the etcd CA there): create it with keys tls.crt and tls.key, or give --cacert, --cert and --key',
    );
    expect(credentialProblem(sample.listFailures)?.reason).toBe('TLS_FAILED');
  });

  it('a kubeadm cluster reached with its workload kubeconfig only, no files: TLS, saying both ways to give a certificate', async () => {
    const sample = await probe(kubeEtcd({ workloadKubeconfig: fake.kubeconfigYaml() }));
    expect(sample.listFailures.map((f) => f.reachability)).toEqual(['tls']);
    const message = sample.listFailures[0]!.failure!.message;
    expect(message).toContain('no etcd client certificate is configured for this cluster: give --cacert, --cert and --key');
    expect(message).toContain(
      'or reach it through Cluster API (--kubeconfig of the management cluster with --cluster) so one is minted from its Secret <cluster>-etcd',
    );
  });

  it('another CA in the Secret: TLS, naming the Secret; once the Secret is right, the next probe reads it again and answers', async () => {
    fake.putSecret('default', 'rotated-etcd', await caSecret(other, 'other'));
    const kube = kubeEtcd(accessOf(fake, 'rotated'));
    const failed = await probe(kube);
    expect(failed.listFailures.map((f) => f.reachability)).toEqual(['tls']);
    expect(failed.listFailures[0]!.failure!.message).toContain(
      "the member's server certificate is not signed by the etcd CA in Secret default/rotated-etcd (tls.crt): the Secret must hold this cluster's etcd CA",
    );
    fake.putSecret('default', 'rotated-etcd', await caSecret(certs, 'etcd'));
    const healed = await probe(kube);
    expect(healed.members.map((m) => m.paths.map((p) => p.reachability))).toEqual([['ok']]);
  });

  it("the operator's files override the Secret", async () => {
    const kube = kubeEtcd(accessOf(fake, 'stale'), {
      ...certs.files,
      sources: { ca: `--cacert ${certs.caFile}`, cert: `--cert ${certs.certFile}`, key: `--key ${certs.keyFile}` },
    });
    const sample = await probe(kube);
    expect(sample.members.map((m) => m.paths.map((p) => p.reachability))).toEqual([['ok']]);
    expect(fake.requestCount('GET', '/namespaces/default/secrets/stale-etcd')).toBe(0);
  });

  it("the operator's file the member refuses: TLS, naming the file", async () => {
    const wrong = {
      ca: certs.files.ca,
      cert: other.files.cert!,
      key: other.files.key!,
      sources: { ca: `--cacert ${certs.caFile}`, cert: `--cert ${other.certFile}`, key: `--key ${other.keyFile}` },
    };
    const sample = await probe(kubeEtcd(accessOf(fake, 'wl'), wrong));
    expect(sample.listFailures.map((f) => f.reachability)).toEqual(['tls']);
    expect(sample.listFailures[0]!.failure!.message).toContain(`fix --cert ${other.certFile}`);
  });

  it('a Secret the identity may not read: TLS, naming the RBAC rule', async () => {
    const forbidden = fake.failNext({ method: 'GET', path: /\/secrets\/wl-etcd$/, status: 403, times: 10 });
    const sample = await probe(kubeEtcd(accessOf(fake, 'wl')));
    forbidden.clear();
    expect(sample.listFailures.map((f) => f.reachability)).toEqual(['tls']);
    expect(sample.listFailures[0]!.failure!.message).toContain('RBAC: the identity needs get on secrets in namespace default');
  });

  it('a plain-http member with no Secret still answers over plain http', async () => {
    const sample = await probe(kubeEtcd(accessOf(plainFake, 'wl')));
    expect(sample.members.map((m) => m.paths.map((p) => p.reachability))).toEqual([['ok']]);
  });
});
