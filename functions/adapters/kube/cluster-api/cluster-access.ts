// Where a workload cluster's kubeconfig comes from under Cluster API: the Secret
// `<cluster>-kubeconfig` in the Cluster's namespace of the management cluster, key `value`
// (CAPI util/secret: the kubeconfig KCP itself uses).
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { describeKubeError, isNotFound } from '../api-errors.ts';

export const kubeconfigSecretName = (clusterName: string): string => `${clusterName}-kubeconfig`;
export const KUBECONFIG_SECRET_KEY = 'value';

export class ClusterAccessError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ClusterAccessError';
  }
}

/**
 * The workload kubeconfig as YAML text, from Cluster API's Secret or the one `name` gives instead
 * (same key); a clear error naming the Secret when it cannot be read.
 */
export async function workloadKubeconfigFromSecret(
  management: KubeConfig,
  namespace: string,
  clusterName: string,
  name = kubeconfigSecretName(clusterName),
): Promise<string> {
  const where = `Secret ${namespace}/${name}`;
  let secret;
  try {
    secret = await management.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace, name });
  } catch (error) {
    if (isNotFound(error) && name !== kubeconfigSecretName(clusterName)) {
      throw new ClusterAccessError(
        `${where} does not exist: create it, key "${KUBECONFIG_SECRET_KEY}", with a kubeconfig of ${clusterName}'s etcd-remediator ServiceAccount (infra/kubernetes/workload-rbac.yaml)`,
        { cause: error },
      );
    }
    if (isNotFound(error)) {
      throw new ClusterAccessError(
        `${where} does not exist: is ${clusterName} a Cluster API cluster in namespace ${namespace}? (give --namespace, or --workload-kubeconfig)`,
        { cause: error },
      );
    }
    throw new ClusterAccessError(`reading ${where} failed: ${describeKubeError(error)} (the identity needs get on secrets there)`, { cause: error });
  }
  const encoded = secret.data?.[KUBECONFIG_SECRET_KEY];
  if (!encoded) throw new ClusterAccessError(`${where} has no "${KUBECONFIG_SECRET_KEY}" key, where Cluster API keeps the kubeconfig`);
  return Buffer.from(encoded, 'base64').toString('utf8');
}
