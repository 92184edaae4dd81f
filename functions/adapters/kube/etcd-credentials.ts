// The etcd client credentials of one cluster reached through Kubernetes, per connection, in order:
//   1. the files the operator gave (CLI flags, a `run` cluster's tls, the AWS directory's secret):
//      they override, for kubeadm clusters without Cluster API;
//   2. for a Cluster API cluster, a certificate minted from its etcd CA (the Secret
//      `<cluster>-etcd`), that CA also being the trust anchor of the members' server certificates
//      (kubeadm signs them with it);
//   3. none: plain http, and a member that turns plain http away says which of the above to give.
// The CA is read once for a while and again after a TLS failure (it may have been rotated); each
// connection gets a certificate of its own. Key material stays in memory and out of messages.
import type { KubeConfig } from '@kubernetes/client-node';
import { EtcdCallError, type TlsFiles } from '../../ports/etcd.ts';
import { tlsFaultOf } from '../etcd/index.ts';
import { ETCD_CA_CERT_KEY, EtcdCaError, readEtcdCa, type EtcdCa } from './cluster-api/etcd-ca.ts';
import { CLIENT_CERT_VALIDITY_MS, mintClientCertificate, UnusableCaError } from './etcd-client-cert.ts';

/** What one connection is made with. */
export interface ConnectionTls {
  /** Undefined: plain http. */
  tls?: TlsFiles;
  /** Date.now() from which a new connection needs new material (a minted certificate past half its life). */
  renewAt: number;
  /** What to fix, said after a TLS failure of a connection made with this; undefined when etcd's words (and the files' names) say it. */
  advice(message: string): string | undefined;
}

export interface EtcdClientCredentials {
  /** Material for one new connection. Rejects with an EtcdCallError when the cluster's CA cannot be had. */
  forConnection(): Promise<ConnectionTls>;
  /** A connection failed on TLS: the CA is read again for the next one. */
  refresh(): void;
}

export interface EtcdCredentialsOptions {
  /** The files the operator gave; they win. */
  explicit?: TlsFiles;
  /** Reads the cluster's etcd CA (the Secret `<cluster>-etcd`), for a Cluster API cluster. */
  readCa?: () => Promise<EtcdCa>;
  /** How long a CA read stands (default 5 min). */
  caTtlMs?: number;
  now?: () => number;
}

export const CA_TTL_MS = 5 * 60_000;
/** A management cluster that does not answer holds no connection up longer than this. */
const CA_READ_TIMEOUT_MS = 15_000;

const NO_CREDENTIALS =
  "no etcd client certificate is configured for this cluster: give --cacert, --cert and --key (a run config's or registration's tls files), " +
  'or reach it through Cluster API (--kubeconfig of the management cluster with --cluster) so one is minted from its Secret <cluster>-etcd';

/** After a TLS failure with a certificate minted from the CA in `where`, valid until `caNotAfter`. */
function mintedAdvice(where: string, caNotAfter: Date): (message: string) => string {
  return (message) => {
    const fault = tlsFaultOf(message);
    // The minting refuses a CA out of its validity, so the expired certificate is the member's.
    if (fault === 'out-of-validity') {
      return `the member's server certificate has expired or is not yet valid, though the etcd CA in ${where} is valid until ${caNotAfter.toISOString()}: renew the member's server certificate (kubeadm certs renew etcd-server)`;
    }
    if (fault === 'server-unverified')
      return `the member's server certificate is not signed by the etcd CA in ${where} (${ETCD_CA_CERT_KEY}): the Secret must hold this cluster's etcd CA`;
    if (fault === 'client-refused')
      return `the member refused the client certificate minted from the etcd CA in ${where}: it trusts another CA; the Secret must hold this cluster's etcd CA`;
    return `the client certificate was minted from the etcd CA in ${where}`;
  };
}

type CaRead = { ca: EtcdCa } | { missing: EtcdCaError };

/** A Secret's problem as the probe sees it: waiting helps only when the management cluster did not answer. */
const asCallError = (error: EtcdCaError): EtcdCallError =>
  new EtcdCallError({ kind: error.problem === 'unreachable' ? 'other' : 'tls', message: error.message }, { cause: error });

export function createEtcdCredentials(options: EtcdCredentialsOptions): EtcdClientCredentials {
  const now = options.now ?? Date.now;
  const ttl = options.caTtlMs ?? CA_TTL_MS;
  const { explicit, readCa } = options;
  let cached: { read: CaRead; at: number } | undefined;
  let lastCa: EtcdCa | undefined;
  let reading: Promise<CaRead> | undefined;

  async function caRead(): Promise<CaRead> {
    if (cached && now() - cached.at < ttl) return cached.read;
    reading ??= (async (): Promise<CaRead> => {
      try {
        const ca = await readCa!();
        lastCa = ca;
        return { ca };
      } catch (error) {
        if (!(error instanceof EtcdCaError)) throw error;
        if (error.problem === 'missing') return { missing: error };
        // The management cluster did not answer: the CA read last still signs.
        if (error.problem === 'unreachable' && lastCa) return { ca: lastCa };
        throw asCallError(error);
      }
    })().then(
      (read) => {
        cached = { read, at: now() };
        reading = undefined;
        return read;
      },
      (error: unknown) => {
        reading = undefined;
        throw error;
      },
    );
    return reading;
  }

  return {
    async forConnection() {
      if (explicit) return { tls: explicit, renewAt: Infinity, advice: () => undefined };
      if (!readCa) return { renewAt: Infinity, advice: () => NO_CREDENTIALS };
      const read = await caRead();
      if ('missing' in read) return { renewAt: now() + ttl, advice: () => read.missing.message };
      const { ca } = read;
      let minted;
      try {
        minted = await mintClientCertificate(ca.cert, ca.key, new Date(now()));
      } catch (error) {
        if (!(error instanceof UnusableCaError)) throw error;
        throw new EtcdCallError(
          { kind: 'tls', message: `${ca.where} holds no etcd CA a client certificate can be minted from: ${error.message}` },
          { cause: error },
        );
      }
      return {
        tls: { ca: ca.cert, cert: minted.cert, key: minted.key },
        renewAt: now() + CLIENT_CERT_VALIDITY_MS / 2,
        advice: mintedAdvice(ca.where, minted.caNotAfter),
      };
    },
    refresh() {
      cached = undefined;
    },
  };
}

/** A cluster's source: its files, else (Cluster API) its etcd CA in the management cluster, else none. */
export function credentialsForCluster(
  explicit: TlsFiles | undefined,
  management?: { config: KubeConfig; namespace: string; clusterName: string },
): EtcdClientCredentials {
  return createEtcdCredentials({
    ...(explicit ? { explicit } : {}),
    ...(management
      ? { readCa: () => readEtcdCa(management.config, management.namespace, management.clusterName, AbortSignal.timeout(CA_READ_TIMEOUT_MS)) }
      : {}),
  });
}
