// A control plane as Cluster API sees it, for the scenarios: a real etcd lab whose members are
// named after their nodes (as kubeadm names them), behind the protocol-level FAKE API server that
// serves the Nodes, the etcd static pods (port-forward and exec reach the lab) and the Machines.
//
// etcd serves clients as kubeadm runs it (https, --client-cert-auth), under a CA whose certificate
// and key the product can get only from the Secret `<cluster>-etcd`, as Cluster API keeps it
// (`tls: false` for a plain-http lab). Each node's pod filesystem holds what kubeadm writes in
// pki/etcd for the relay's etcdctl: ca.crt and the healthcheck client's certificate and key.
import fs from 'node:fs';
import path from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { freePort } from '../../../infra/lab/free-port.ts';
import { startLab, type Lab, type LabMember } from '../../../infra/lab/lab.ts';
import { issueCert, readClientTls } from '../../../infra/lab/lab-pki.ts';
import type { TlsFiles } from '../../../functions/ports/etcd.ts';
import type { KubeAccessConfig } from '../../../functions/ports/kube-access.ts';
import { kubeconfigSecretName, KUBECONFIG_SECRET_KEY } from '../../../functions/adapters/kube/cluster-api/cluster-access.ts';
import { ETCD_CA_CERT_KEY, ETCD_CA_KEY_KEY, etcdCaSecretName } from '../../../functions/adapters/kube/cluster-api/etcd-ca.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

export const CAPI_NAMESPACE = 'default';
export const CAPI_CLUSTER = 'wl';
/** Cluster API's Secret of the cluster's etcd CA. */
export const ETCD_CA_SECRET = etcdCaSecretName(CAPI_CLUSTER);
/**
 * How Cluster API writes a cluster's Secrets, the etcd CA (util/secret Certificate.AsSecret) and the
 * admin kubeconfig (util/kubeconfig GenerateSecretWithOwner): of its own type, labelled with the cluster.
 */
export const CLUSTER_SECRET = { type: 'cluster.x-k8s.io/secret', labels: { 'cluster.x-k8s.io/cluster-name': CAPI_CLUSTER } };

/** Files and PEM a test uses to ask the TLS world's etcd its own questions. */
export interface WorldClientCert {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The same, read, for the project's etcd transport. */
  files: TlsFiles;
}

export interface KubeWorldTls {
  /** The etcd CA's certificate (PEM); its key is in the Secret only. */
  caPem: string;
  /** Where the CA is kept: the Secret `<cluster>-etcd` in CAPI_NAMESPACE. */
  secretName: string;
  /** A client certificate of the CA, for the test's own questions (not the product's). */
  client: WorldClientCert;
  /** A node's pod filesystem root (fake.setPodRoot): `<root>/etc/kubernetes/pki/etcd/...`. */
  podRootOf(node: string): string;
}

export interface KubeWorld {
  lab: Lab;
  fake: KubeApiFake;
  /** The CAPI Machine of a lab member. */
  machineOf(member: LabMember): string;
  /** Workload and management access, both served by the fake. */
  access: KubeAccessConfig;
  /** The Machine as the API returns it; undefined once it is gone. */
  readMachine(name: string): Promise<{ annotations: Record<string, string>; deleting: boolean } | undefined>;
  /** Present unless the world was started with `tls: false`. */
  tls?: KubeWorldTls;
  /** Puts the Secret `<cluster>-kubeconfig` as Cluster API keeps it, holding the fake's kubeconfig (it serves both sides). */
  putKubeconfigSecret(): void;
  /**
   * A replacement control-plane machine as KCP's scale-up and kubeadm join make it: an etcd member
   * joined as a learner and promoted, its Node (Ready), its etcd pod and its Machine `wl-<member>`.
   */
  joinReplacementMachine(): Promise<{ member: LabMember; machine: string }>;
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
  /** etcd serves clients over TLS as kubeadm runs it, its CA in the Secret `<cluster>-etcd` only (default true). */
  tls?: boolean;
  /**
   * Each member serves plain-http /metrics on a port of its own (--listen-metrics-urls), as
   * kubeadm's 127.0.0.1:2381, and its pod says so in its command: the port-forward reaches it.
   */
  metricsListeners?: boolean;
  /** More flags for members by name (cp-1…cp-N): a small --quota-backend-bytes, say. */
  memberArgs?: Record<string, string[]>;
}

/**
 * The test's own etcd credentials in the world, for a client it makes itself (none when etcd
 * serves plain http). The product finds its own from the Secret when it has management access.
 */
export const worldEtcdTls = (world: Pick<KubeWorld, 'tls'>): { tls?: TlsFiles } => (world.tls ? { tls: world.tls.client.files } : {});

/** The same as the CLI takes them, for a kubeadm cluster reached without Cluster API. */
export const worldTlsFlags = (world: Pick<KubeWorld, 'tls'>): string[] => {
  const client = world.tls?.client;
  return client ? ['--cacert', client.caFile, '--cert', client.certFile, '--key', client.keyFile] : [];
};

/** kubeadm's pki/etcd files in one node's pod filesystem. */
async function provisionPodTls(lab: Lab, fake: KubeApiFake, podRootOf: (node: string) => string, member: LabMember): Promise<void> {
  const pki = lab.tls!;
  const etcdPki = path.join(podRootOf(member.name), 'etc', 'kubernetes', 'pki', 'etcd');
  // kubeadm's certlist.go: CN kube-etcd-healthcheck-client, O system:masters, client auth only.
  await issueCert({ certFile: pki.caFile, keyFile: pki.caKeyFile }, etcdPki, 'healthcheck-client', {
    commonName: 'kube-etcd-healthcheck-client',
    organization: 'system:masters',
    usage: 'client',
  });
  fs.copyFileSync(pki.caFile, path.join(etcdPki, 'ca.crt'));
  fake.setPodRoot(member.name, podRootOf(member.name));
}

/** kubeadm's pki/etcd files in each node's pod filesystem, and the CA Secret as Cluster API keeps it. */
async function provisionTls(lab: Lab, fake: KubeApiFake): Promise<KubeWorldTls> {
  const pki = lab.tls!;
  const caPem = fs.readFileSync(pki.caFile, 'utf8');
  fake.putSecret(CAPI_NAMESPACE, ETCD_CA_SECRET, { [ETCD_CA_CERT_KEY]: caPem, [ETCD_CA_KEY_KEY]: fs.readFileSync(pki.caKeyFile, 'utf8') }, CLUSTER_SECRET);
  // Under the lab's root, so the lab's down() removes it.
  const pods = fs.mkdtempSync(path.join(lab.root, 'pods-'));
  const podRootOf = (node: string): string => path.join(pods, node);
  await Promise.all(lab.members.map((member) => provisionPodTls(lab, fake, podRootOf, member)));
  const client = { caFile: pki.caFile, certFile: pki.certFile, keyFile: pki.keyFile };
  return { caPem, secretName: ETCD_CA_SECRET, client: { ...client, files: readClientTls(pki) }, podRootOf };
}

export async function startKubeWorld(members = 3, options: KubeWorldOptions = {}): Promise<KubeWorld> {
  const withTls = options.tls ?? true;
  // The lab names its members <prefix>1…<prefix>N; each listener's port is picked before it starts.
  const metricsPorts = new Map<string, number>();
  if (options.metricsListeners) for (let i = 1; i <= members; i += 1) metricsPorts.set(`cp-${i}`, await freePort());
  const metricsFlag = (port: number) => `--listen-metrics-urls=http://127.0.0.1:${port}`;
  const memberArgs: Record<string, string[]> = { ...options.memberArgs };
  for (const [name, port] of metricsPorts) memberArgs[name] = [...(memberArgs[name] ?? []), metricsFlag(port)];
  const lab = await startLab({ members, namePrefix: 'cp-', tls: withTls, ...(Object.keys(memberArgs).length > 0 ? { memberArgs } : {}) });
  let fake: KubeApiFake;
  let tls: KubeWorldTls | undefined;
  try {
    // Deleted Machines keep their deletionTimestamp for the test: CAPI drains before they go.
    fake = await startKubeApiFake({ machineDeletionMs: 600_000, ...(options.token === undefined ? {} : { token: options.token }) });
  } catch (error) {
    await lab.down();
    throw error;
  }
  try {
    if (withTls) tls = await provisionTls(lab, fake);
  } catch (error) {
    await fake.stop();
    await lab.down();
    throw error;
  }
  /** A lab member as kubeadm's node: its Node, its etcd pod (port-forward and exec reach the member) and its Machine. */
  const attach = (member: LabMember, index: number): void => {
    const metricsPort = metricsPorts.get(member.name);
    fake.addControlPlaneNode({
      name: member.name,
      internalIp: `10.0.0.${11 + index}`,
      machine: { name: `wl-${member.name}`, namespace: CAPI_NAMESPACE, clusterName: CAPI_CLUSTER },
      clientUrl: member.clientUrl,
      ...(metricsPort === undefined ? {} : { etcdFlags: [metricsFlag(metricsPort)] }),
    });
    // On the host network the pod's metrics port is the member's own listener, not its fault proxy.
    if (metricsPort !== undefined) fake.setPortUpstream(member.name, metricsPort, { host: '127.0.0.1', port: metricsPort });
    // Through the member's fault proxy, as its client URL is: a cut member is cut on every path.
    const proxy = new URL(member.clientUrl);
    fake.setUpstream(member.name, { host: proxy.hostname, port: Number(proxy.port) });
  };
  lab.members.forEach(attach);
  const kubeconfig = fake.kubeconfigYaml();
  const putKubeconfigSecret = (): void =>
    fake.putSecret(CAPI_NAMESPACE, kubeconfigSecretName(CAPI_CLUSTER), { [KUBECONFIG_SECRET_KEY]: kubeconfig }, CLUSTER_SECRET);
  if (options.kubeconfigFile !== undefined) {
    fake.writeKubeconfig(options.kubeconfigFile);
    putKubeconfigSecret();
  }
  const objects = fake.kubeConfig().makeApiClient(CustomObjectsApi);
  return {
    lab,
    fake,
    machineOf: (member) => `wl-${member.name}`,
    ...(tls ? { tls } : {}),
    putKubeconfigSecret,
    async joinReplacementMachine() {
      const member = await lab.joinReplacement({ timeoutMs: 30_000 });
      if (tls) await provisionPodTls(lab, fake, (node) => tls.podRootOf(node), member);
      attach(member, lab.members.indexOf(member));
      return { member, machine: `wl-${member.name}` };
    },
    access: { workloadKubeconfig: kubeconfig, management: { kubeconfig, namespace: CAPI_NAMESPACE, clusterName: CAPI_CLUSTER } },
    async readMachine(name) {
      try {
        const machine = (await objects.getNamespacedCustomObject({
          group: 'cluster.x-k8s.io',
          version: 'v1beta1',
          namespace: CAPI_NAMESPACE,
          plural: 'machines',
          name,
        })) as {
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
