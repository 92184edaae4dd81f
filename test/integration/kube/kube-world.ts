// A control plane as Cluster API sees it, for the scenarios: a real etcd lab whose members are
// named after their nodes (as kubeadm names them), behind the protocol-level FAKE API server that
// serves the Nodes, the etcd static pods (port-forward and exec reach the lab) and the Machines.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { startLab, type Lab, type LabMember } from '../../../infra/lab/lab.ts';
import type { KubeAccessConfig } from '../../../functions/ports/kube-access.ts';
import { kubeconfigSecretName, KUBECONFIG_SECRET_KEY } from '../../../functions/adapters/kube/cluster-api/cluster-access.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

export const CAPI_NAMESPACE = 'default';
export const CAPI_CLUSTER = 'wl';

export interface KubeWorld {
  lab: Lab;
  fake: KubeApiFake;
  /** The CAPI Machine of a lab member. */
  machineOf(member: LabMember): string;
  /** Workload and management access, both served by the fake. */
  access: KubeAccessConfig;
  /** The Machine as the API returns it; undefined once it is gone. */
  readMachine(name: string): Promise<{ annotations: Record<string, string>; deleting: boolean } | undefined>;
  down(): Promise<void>;
}

export interface KubeWorldOptions {
  /**
   * For a CLI run: writes the fake's kubeconfig to this file (`--kubeconfig`), and puts it in the
   * Secret `wl-kubeconfig` as Cluster API keeps a workload cluster's (the fake serves both sides).
   */
  kubeconfigFile?: string;
  /** The kubeconfig's bearer token (default fake-token): a distinctive one for tests that look for it. */
  token?: string;
}

export async function startKubeWorld(members = 3, options: KubeWorldOptions = {}): Promise<KubeWorld> {
  const lab = await startLab({ members, namePrefix: 'cp-' });
  let fake: KubeApiFake;
  try {
    // Deleted Machines keep their deletionTimestamp for the test: CAPI drains before they go.
    fake = await startKubeApiFake({ machineDeletionMs: 600_000, ...(options.token === undefined ? {} : { token: options.token }) });
  } catch (error) {
    await lab.down();
    throw error;
  }
  lab.members.forEach((member, index) => {
    fake.addControlPlaneNode({
      name: member.name,
      internalIp: `10.0.0.${11 + index}`,
      machine: { name: `wl-${member.name}`, namespace: CAPI_NAMESPACE, clusterName: CAPI_CLUSTER },
      clientUrl: member.clientUrl,
    });
    // Through the member's fault proxy, as its client URL is: a cut member is cut on every path.
    const proxy = new URL(member.clientUrl);
    fake.setUpstream(member.name, { host: proxy.hostname, port: Number(proxy.port) });
  });
  const kubeconfig = fake.kubeconfigYaml();
  if (options.kubeconfigFile !== undefined) {
    fake.writeKubeconfig(options.kubeconfigFile);
    fake.putSecret(CAPI_NAMESPACE, kubeconfigSecretName(CAPI_CLUSTER), { [KUBECONFIG_SECRET_KEY]: kubeconfig });
  }
  const objects = fake.kubeConfig().makeApiClient(CustomObjectsApi);
  return {
    lab,
    fake,
    machineOf: (member) => `wl-${member.name}`,
    access: { workloadKubeconfig: kubeconfig, management: { kubeconfig, namespace: CAPI_NAMESPACE, clusterName: CAPI_CLUSTER } },
    async readMachine(name) {
      try {
        const machine = (await objects.getNamespacedCustomObject({ group: 'cluster.x-k8s.io', version: 'v1beta1', namespace: CAPI_NAMESPACE, plural: 'machines', name })) as {
          metadata: { annotations?: Record<string, string>; deletionTimestamp?: string };
        };
        return { annotations: machine.metadata.annotations ?? {}, deleting: machine.metadata.deletionTimestamp !== undefined };
      } catch {
        return undefined;
      }
    },
    async down() {
      try {
        await fake.stop();
      } finally {
        await lab.down();
      }
    },
  };
}
