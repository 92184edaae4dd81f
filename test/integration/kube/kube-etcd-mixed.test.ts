// A member whose etcd serves plain http in a cluster whose etcd CA is in `<cluster>-etcd`: the
// port-forward speaks TLS to it, and its port hangs up on the TLS hello without a byte. The
// failure is TLS (the member is alive, not refused) and says the member serves plain http.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeEtcd } from '../../../functions/adapters/kube/kube-etcd.ts';
import { makeCerts, startSingleEtcd, type SingleEtcd } from '../adapters/single-etcd.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

const CALL_MS = 2_000;

describe('a plain-http member while the Secret <cluster>-etcd exists', () => {
  let dir: string;
  let plain: SingleEtcd;
  let fake: KubeApiFake;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-mixed-'));
    const certs = await makeCerts(dir, 'etcd', 'rsa');
    plain = await startSingleEtcd();
    fake = await startKubeApiFake();
    fake.addControlPlaneNode({ name: 'cp-1', internalIp: '10.0.0.11', clientUrl: plain.endpoint });
    const url = new URL(plain.endpoint);
    fake.setUpstream('cp-1', { host: url.hostname, port: Number(url.port) });
    fake.putSecret('default', 'wl-etcd', { 'tls.crt': certs.files.ca.toString(), 'tls.key': await readFile(join(dir, 'etcd-ca.key'), 'utf8') });
  });
  afterAll(async () => {
    await fake?.stop();
    await plain?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('fails on TLS, saying the member serves plain http', async () => {
    const kube = createKubeEtcd(
      { workloadKubeconfig: fake.kubeconfigYaml(), management: { kubeconfig: fake.kubeconfigYaml(), namespace: 'default', clusterName: 'wl' } },
      { guardPrefix: '/etcd-remediator-test', callTimeoutMs: CALL_MS },
    );
    try {
      const sample = await kube.prober.probe({ seeds: [], deadlineMs: 2 * CALL_MS, paths: ['port-forward'] });
      expect(sample.listFailures.map((f) => f.reachability)).toEqual(['tls']);
      expect(sample.listFailures[0]!.failure!.message).toBe(
        'port-forward to kube-system/etcd-cp-1: port 2379 in the pod closed the connection without answering the TLS hello: the member serves plain http (the client certificate was minted from the etcd CA in Secret default/wl-etcd)',
      );
    } finally {
      await kube.close();
    }
  });
});
