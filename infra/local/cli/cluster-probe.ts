// One prober per command, for commands that look at a cluster without the runtime: probe, plan,
// and remediate's target lookup.
import { createEtcd3Transport, createProber, directPaths } from '../../../functions/adapters/etcd/index.ts';
import type { ProbeSample } from '../../../functions/core/types.ts';
import { buildClusterView, type ClusterView } from '../../../functions/core/view.ts';
import type { ClusterEntry } from '../../../functions/ports/cluster-directory.ts';

export interface Probed {
  sample: ProbeSample;
  view: ClusterView;
}

export interface ClusterProbe {
  /** Seeds are the configured endpoints plus every client URL an earlier view saw. */
  probe(previous?: ClusterView): Promise<Probed>;
  close(): Promise<void>;
}

export function openClusterProbe(cluster: ClusterEntry): ClusterProbe {
  const transport = createEtcd3Transport(cluster.tls ? { tls: cluster.tls } : {});
  const prober = createProber(transport, directPaths);
  return {
    async probe(previous) {
      const seeds = [...new Set([...cluster.endpoints, ...(previous?.members.flatMap((m) => m.clientUrls) ?? [])])];
      const sample = await prober.probe({ seeds, deadlineMs: cluster.policy.callTimeoutMs, paths: cluster.policy.pathOrder });
      return { sample, view: buildClusterView(sample) };
    },
    close: () => transport.close(),
  };
}
