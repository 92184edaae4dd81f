// The kube world over TLS, as kubeadm and Cluster API keep it: etcd with --client-cert-auth under
// a CA whose key only the Secret `<cluster>-etcd` holds, and each node's pod filesystem with
// kubeadm's pki/etcd files, which the real etcdctl of the fake's exec opens as it would in the pod.
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { endpointStatusArgv, KUBEADM_ETCD_TLS } from '../../../functions/adapters/kube/exec-relay/exec-relay-etcdctl.ts';
import { createEtcd3Transport } from '../../../functions/adapters/etcd/index.ts';
import { createPodStreams } from '../../../functions/adapters/kube/streams/pod-streams-client.ts';
import type { PodStreams } from '../../../functions/adapters/kube/streams/pod-streams.ts';
import { CAPI_NAMESPACE, ETCD_CA_SECRET, startKubeWorld, type KubeWorld, type KubeWorldTls } from './kube-world.ts';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** The member id in `endpoint status -w json` output, hex (read as text: it is a uint64). */
const memberIdIn = (stdout: string): string => {
  const decimal = /"member_id":(\d+)/.exec(stdout)?.[1];
  return decimal === undefined ? `no member_id in ${stdout}` : BigInt(decimal).toString(16);
};

/** Every file under dir, recursively. */
const filesUnder = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));

describe('kube world with etcd over TLS', () => {
  let world: KubeWorld;
  let tls: KubeWorldTls;
  let streams: PodStreams;
  const member = (node: string) => world.lab.member(node);
  const status = (relayNode: string, target: string, call: Partial<Parameters<typeof endpointStatusArgv>[0]> = {}) =>
    streams.exec(
      { namespace: 'kube-system', name: `etcd-${relayNode}`, container: 'etcd' },
      endpointStatusArgv({ endpoint: member(target).clientUrl, commandTimeoutMs: 2_000, dialTimeoutMs: 2_000, ...call }),
      8_000,
    );

  beforeAll(async () => {
    world = await startKubeWorld(3, { tls: true });
    tls = world.tls!;
    streams = createPodStreams(world.fake.kubeConfig());
  });

  afterAll(async () => {
    await streams?.close();
    await world?.down();
  });

  it('keeps the etcd CA in the Secret <cluster>-etcd as Cluster API does: tls.crt and an RSA tls.key that signs it', async () => {
    expect(world.lab.members.every((m) => m.clientUrl.startsWith('https://'))).toBe(true);
    expect(tls.secretName).toBe(ETCD_CA_SECRET);
    const secret = await world.fake.kubeConfig().makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: CAPI_NAMESPACE, name: 'wl-etcd' });
    const crt = Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
    const key = Buffer.from(secret.data?.['tls.key'] ?? '', 'base64').toString('utf8');
    expect(crt).toBe(tls.caPem);
    // certs.EncodePrivateKeyPEM: PKCS#1.
    expect(key).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    const ca = new X509Certificate(crt);
    expect(ca.ca).toBe(true);
    const publicOfKey = createPublicKey(createPrivateKey(key)).export({ type: 'spki', format: 'der' });
    expect(publicOfKey.equals(ca.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
    // The members' server certificates are the CA's.
    const server = new X509Certificate(fs.readFileSync(path.join(world.lab.root, 'cp-1', 'pki', 'server.crt')));
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.checkHost('localhost')).toBe('localhost');
  });

  it('writes kubeadm’s pki/etcd in each pod filesystem, and never the CA key', () => {
    const ca = new X509Certificate(tls.caPem);
    const caKey = createPrivateKey(fs.readFileSync(world.lab.tls!.caKeyFile)).export({ type: 'pkcs1', format: 'pem' }).toString();
    for (const m of world.lab.members) {
      const etcdPki = path.join(tls.podRootOf(m.name), 'etc', 'kubernetes', 'pki', 'etcd');
      expect(fs.readdirSync(etcdPki).sort()).toEqual(['ca.crt', 'healthcheck-client.crt', 'healthcheck-client.key']);
      expect(fs.readFileSync(path.join(etcdPki, 'ca.crt'), 'utf8')).toBe(tls.caPem);
      const client = new X509Certificate(fs.readFileSync(path.join(etcdPki, 'healthcheck-client.crt')));
      expect(client.subject.split('\n').sort()).toEqual(['CN=kube-etcd-healthcheck-client', 'O=system:masters']);
      expect(client.keyUsage).toEqual([CLIENT_AUTH]);
      expect(client.verify(ca.publicKey)).toBe(true);
      for (const file of filesUnder(tls.podRootOf(m.name))) expect(fs.readFileSync(file, 'utf8')).not.toContain(caKey.split('\n')[1]);
    }
  });

  it('runs the real etcdctl with kubeadm’s pod paths, read from the node’s pod filesystem, and reaches a TLS member', async () => {
    const run = await status('cp-1', 'cp-2');
    expect(run.exitCode, run.stderr).toBe(0);
    expect(memberIdIn(run.stdout)).toBe(member('cp-2').id);
  });

  it('fails as etcdctl fails in the pod when a certificate file is missing there, naming the pod’s path', async () => {
    fs.rmSync(path.join(tls.podRootOf('cp-3'), 'etc', 'kubernetes', 'pki', 'etcd', 'healthcheck-client.key'));
    const run = await status('cp-3', 'cp-1');
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).toContain(`open ${KUBEADM_ETCD_TLS.key}: no such file or directory`);
    expect(run.stderr).not.toContain(tls.podRootOf('cp-3'));
  });

  it('refuses an etcdctl that shows no client certificate', async () => {
    const run = await status('cp-1', 'cp-2', { tls: null, dialTimeoutMs: 500, commandTimeoutMs: 500 });
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).toContain(`Failed to get the status of endpoint ${member('cp-2').clientUrl}`);
  });

  it('passes TLS through a port-forward, for a client with a certificate of the CA', async () => {
    const forward = await streams.forward({ namespace: 'kube-system', name: 'etcd-cp-2' }, 2379);
    const transport = createEtcd3Transport({ tls: tls.client.files });
    try {
      // kubeadm's server certificates name 127.0.0.1, where the local end of a port-forward listens.
      const answer = await transport.client({ endpoint: `https://127.0.0.1:${forward.port}`, path: 'port-forward' }).status(5_000);
      const truth = await world.lab.status('cp-2');
      expect(answer.leaderId).toBe(truth.leaderId);
      expect(answer.clusterId).toBe(truth.clusterId);
    } finally {
      await transport.close();
      await forward.close();
    }
  });
});

describe('kube world by default', () => {
  it('serves etcd over TLS, as kubeadm runs it; tls: false keeps plain http', async () => {
    const [tlsWorld, plainWorld] = await Promise.all([startKubeWorld(1), startKubeWorld(1, { tls: false })]);
    try {
      expect(tlsWorld.tls?.secretName).toBe(ETCD_CA_SECRET);
      expect(tlsWorld.lab.members[0]!.clientUrl).toMatch(/^https:\/\//);
      expect(plainWorld.tls).toBeUndefined();
      expect(plainWorld.lab.members[0]!.clientUrl).toMatch(/^http:\/\//);
    } finally {
      await Promise.all([tlsWorld.down(), plainWorld.down()]);
    }
  });
});
