// The watcher's directory lists every Cluster of the management cluster for the storm guard's
// share (through the protocol-level fake API server), and says it cannot tell when the list fails.
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, expect, it } from 'vitest';
import { createCapiDirectory } from '../../../functions/adapters/local/capi-directory.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';

const CLUSTERS = resourceType('cluster.x-k8s.io', 'clusters')!;
const cluster = (namespace: string, name: string) => ({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name, namespace }, spec: {} });

let fake: KubeApiFake | undefined;
afterEach(async () => fake?.stop());

it('lists every Cluster in every namespace as namespace/name', async () => {
  fake = await startKubeApiFake();
  for (const [ns, name] of [
    ['team-a', 'wl-1'],
    ['team-a', 'wl-2'],
    ['team-b', 'wl-1'],
  ] as const)
    fake.store.put(CLUSTERS, cluster(ns, name));
  const directory = createCapiDirectory({ management: fake.kubeConfig(), managementSource: 'unused', policy: parsePolicy() });
  expect([...((await directory.registeredClusterIds?.()) ?? [])].sort()).toEqual(['team-a/wl-1', 'team-a/wl-2', 'team-b/wl-1']);
});

it('cannot tell when the list fails: undefined, not an error', async () => {
  const unreachable = new KubeConfig();
  unreachable.loadFromOptions({
    clusters: [{ name: 'x', server: 'http://127.0.0.1:9' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'x', user: 'u' }],
    currentContext: 'c',
  });
  const directory = createCapiDirectory({ management: unreachable, managementSource: 'unused', policy: parsePolicy() });
  expect(await directory.registeredClusterIds?.()).toBeUndefined();
});
