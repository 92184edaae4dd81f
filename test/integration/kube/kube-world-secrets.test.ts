// The kube world's cluster Secrets as Cluster API writes them (util/secret Certificate.AsSecret for
// <cluster>-etcd, util/kubeconfig GenerateSecretWithOwner for <cluster>-kubeconfig): type
// cluster.x-k8s.io/secret, labelled cluster.x-k8s.io/cluster-name with the cluster's name, so a
// list by that label (as clusterctl move and the controllers select a cluster's Secrets) finds both.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, startKubeWorld, type KubeWorld } from './kube-world.ts';

describe('kube world: the cluster Secrets as Cluster API writes them', () => {
  let world: KubeWorld;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-world-secrets-'));
    world = await startKubeWorld(3, { kubeconfigFile: path.join(dir, 'kubeconfig') });
  });
  afterAll(async () => {
    await world?.down();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('<cluster>-etcd and <cluster>-kubeconfig: type cluster.x-k8s.io/secret, labelled with the cluster, listed by that label', async () => {
    const core = world.fake.kubeConfig().makeApiClient(CoreV1Api);
    for (const name of [`${CAPI_CLUSTER}-etcd`, `${CAPI_CLUSTER}-kubeconfig`]) {
      const secret = await core.readNamespacedSecret({ namespace: CAPI_NAMESPACE, name });
      expect(secret.type, name).toBe('cluster.x-k8s.io/secret');
      expect(secret.metadata?.labels, name).toEqual({ 'cluster.x-k8s.io/cluster-name': CAPI_CLUSTER });
    }
    const listed = await core.listNamespacedSecret({ namespace: CAPI_NAMESPACE, labelSelector: `cluster.x-k8s.io/cluster-name=${CAPI_CLUSTER}` });
    expect(listed.items.map((s) => s.metadata?.name).sort()).toEqual([`${CAPI_CLUSTER}-etcd`, `${CAPI_CLUSTER}-kubeconfig`]);
  });
});

describe('kube fake: putSecret', () => {
  let fake: KubeApiFake;
  beforeAll(async () => {
    fake = await startKubeApiFake();
  });
  afterAll(async () => {
    await fake?.stop();
  });

  it('writes Opaque without labels unless told, and the type and labels it is given', async () => {
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    fake.putSecret('default', 'plain', { value: 'v' });
    fake.putSecret('default', 'typed', { value: 'v' }, { type: 'kubernetes.io/tls', labels: { team: 'a' } });
    const plain = await core.readNamespacedSecret({ namespace: 'default', name: 'plain' });
    expect([plain.type, plain.metadata?.labels]).toEqual(['Opaque', undefined]);
    const typed = await core.readNamespacedSecret({ namespace: 'default', name: 'typed' });
    expect([typed.type, typed.metadata?.labels]).toEqual(['kubernetes.io/tls', { team: 'a' }]);
    expect(Buffer.from(typed.data?.value ?? '', 'base64').toString()).toBe('v');
  });
});
