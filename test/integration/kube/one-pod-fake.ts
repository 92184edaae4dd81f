// A FAKE API server with one control-plane node, cp-1, whose etcd pod forwards to a given etcd,
// and the kube access of a Cluster API cluster served by it: for tests of one member's TLS.
import type { KubeAccessConfig } from '../../../functions/ports/kube-access.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

export async function fakeFor(etcd: { endpoint: string }): Promise<KubeApiFake> {
  const fake = await startKubeApiFake();
  fake.addControlPlaneNode({ name: 'cp-1', internalIp: '10.0.0.11', clientUrl: etcd.endpoint });
  const url = new URL(etcd.endpoint);
  fake.setUpstream('cp-1', { host: url.hostname, port: Number(url.port) });
  return fake;
}

/** Workload and management both served by `fake`; the cluster's Secrets in namespace default. */
export const accessOf = (fake: KubeApiFake, clusterName: string): KubeAccessConfig => ({
  workloadKubeconfig: fake.kubeconfigYaml(),
  management: { kubeconfig: fake.kubeconfigYaml(), namespace: 'default', clusterName },
});
