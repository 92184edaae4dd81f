// Where a workload cluster's etcd CA comes from under Cluster API: the Secret `<cluster>-etcd` in
// the Cluster's namespace of the management cluster, keys `tls.crt` and `tls.key` (CAPI
// util/secret: EtcdCA, TLSCrtDataName, TLSKeyDataName), the pair KCP mints its own etcd client
// certificates from. Its contents stay in memory: never logged, never written anywhere.
import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { describeKubeError, isNotFound } from '../api-errors.ts';
import { withSignal } from '../signal.ts';
import { ClusterAccessError } from './cluster-access.ts';

export const etcdCaSecretName = (clusterName: string): string => `${clusterName}-etcd`;
export const ETCD_CA_CERT_KEY = 'tls.crt';
export const ETCD_CA_KEY_KEY = 'tls.key';

export interface EtcdCa {
  /** PEM: the CA certificate, also the trust anchor for the members' server certificates. */
  cert: Buffer;
  /** PEM: the CA's private key (RSA or ECDSA). */
  key: Buffer;
  /** `Secret <namespace>/<name>`, for messages. */
  where: string;
}

/**
 * Why the CA could not be had: the Secret is not there, the identity may not read it, a key is
 * missing, or the management cluster did not answer (the only one worth waiting for).
 */
export type EtcdCaProblem = 'missing' | 'forbidden' | 'no-key' | 'unreachable';

export class EtcdCaError extends ClusterAccessError {
  readonly problem: EtcdCaProblem;
  constructor(problem: EtcdCaProblem, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EtcdCaError';
    this.problem = problem;
  }
}

const DENIED = new Set([401, 403]);

/** The cluster's etcd CA; an EtcdCaError naming the Secret and what to do when it cannot be read. */
export async function readEtcdCa(management: KubeConfig, namespace: string, clusterName: string, signal?: AbortSignal): Promise<EtcdCa> {
  const name = etcdCaSecretName(clusterName);
  const where = `Secret ${namespace}/${name}`;
  let secret;
  try {
    secret = await management.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace, name }, withSignal(signal));
  } catch (error) {
    if (isNotFound(error)) {
      throw new EtcdCaError(
        'missing',
        `${where} does not exist (Cluster API keeps the etcd CA there): create it with keys ${ETCD_CA_CERT_KEY} and ${ETCD_CA_KEY_KEY}, or give --cacert, --cert and --key`,
        { cause: error },
      );
    }
    if (error instanceof ApiException && DENIED.has(error.code)) {
      throw new EtcdCaError(
        'forbidden',
        `reading ${where} was refused: ${describeKubeError(error)} (RBAC: the identity needs get on secrets in namespace ${namespace})`,
        { cause: error },
      );
    }
    throw new EtcdCaError('unreachable', `reading ${where} failed: ${describeKubeError(error)}`, { cause: error });
  }
  const field = (key: string): Buffer => {
    const encoded = secret.data?.[key];
    if (!encoded)
      throw new EtcdCaError(
        'no-key',
        `${where} has no "${key}" key, where Cluster API keeps the etcd CA's ${key === ETCD_CA_CERT_KEY ? 'certificate' : 'private key'}`,
      );
    return Buffer.from(encoded, 'base64');
  };
  return { cert: field(ETCD_CA_CERT_KEY), key: field(ETCD_CA_KEY_KEY), where };
}
