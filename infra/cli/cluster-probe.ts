// One prober per command, for commands that look at a cluster without the runtime: probe, plan,
// and remediate's target lookup. With kube access it probes every path the policy names, as the
// pipeline does; the Kubernetes client is loaded only then.
import { createEtcd3Transport, createProber, credentialsOf, directPaths } from '../../functions/adapters/etcd/index.ts';
import type { ProbeSample } from '../../functions/core/common/index.ts';
import { buildClusterView, type ClusterView } from '../../functions/core/view/index.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';
import type { EtcdTransport, Prober } from '../../functions/ports/etcd.ts';

export interface Probed {
  sample: ProbeSample;
  view: ClusterView;
}

export interface ClusterProbe {
  /** Seeds are the configured endpoints plus, with the direct path, every client URL an earlier view saw. */
  probe(previous?: ClusterView): Promise<Probed>;
  /** The clients the probe uses, for a question beside it (may we remove a member?). */
  transport(): Promise<EtcdTransport>;
  close(): Promise<void>;
}

interface Access {
  prober: Prober;
  transport: EtcdTransport;
  close(): Promise<void>;
}

async function accessTo(cluster: ClusterEntry): Promise<Access> {
  if (cluster.kube) {
    const { createKubeEtcd } = await import('../../functions/adapters/kube/index.ts');
    const access = (await import('../../functions/adapters/local/etcd-access.ts')).createEtcdAccess(createKubeEtcd);
    const etcd = access.etcdFor(cluster);
    return { prober: etcd.prober, transport: etcd.transport, close: () => access.close() };
  }
  const transport = createEtcd3Transport(credentialsOf(cluster));
  return { prober: createProber(transport, directPaths), transport, close: () => transport.close() };
}

export function openClusterProbe(cluster: ClusterEntry): ClusterProbe {
  const access = accessTo(cluster);
  // Without the direct path no client URL is dialed: the members are found through their pods.
  const direct = cluster.policy.pathOrder.includes('direct');
  return {
    async probe(previous) {
      const seen = direct ? (previous?.members.flatMap((m) => m.clientUrls) ?? []) : [];
      const seeds = [...new Set([...cluster.endpoints, ...seen])];
      const sample = await (await access).prober.probe({ seeds, deadlineMs: cluster.policy.callTimeoutMs, paths: cluster.policy.pathOrder });
      return { sample, view: buildClusterView(sample) };
    },
    transport: async () => (await access).transport,
    close: async () => (await access).close(),
  };
}
