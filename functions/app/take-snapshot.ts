// Step 3 of remediation, when the policy asks for it: a snapshot of the keyspace through the
// healthiest member other than the target, before anything is removed.
import { rankMoveCandidates } from '../core/candidates.ts';
import { describeMember, type ClusterView } from '../core/view.ts';
import type { ClusterEntry } from '../ports/cluster-directory.ts';
import { EtcdCallError } from '../ports/etcd.ts';
import type { SnapshotStore } from '../ports/snapshots.ts';
import type { Deps } from './deps.ts';

export type SnapshotOutcome = { ok: true; location: string; via: string } | { ok: false; problem: string };

export async function takeSnapshot(deps: Deps, cluster: ClusterEntry, view: ClusterView, targetId: string, name: string): Promise<SnapshotOutcome> {
  if (!deps.snapshots) return { ok: false, problem: 'the policy asks for a snapshot before removal, but no snapshot store is configured' };
  const { transport } = deps.etcdFor(cluster);
  const problems: string[] = [];
  for (const via of rankMoveCandidates(view, targetId)) {
    const p = via.paths.find((x) => x.reachability === 'ok');
    if (!p) continue;
    let target: Awaited<ReturnType<SnapshotStore['open']>>;
    try {
      target = await deps.snapshots.open(name);
    } catch (error) {
      // Where the snapshot goes is ours, not etcd's: no other member will fix it, so say it and stop.
      return { ok: false, problem: `the snapshot store cannot take ${name}: ${error instanceof Error ? error.message : String(error)}` };
    }
    try {
      await transport.client({ endpoint: p.endpoint, path: p.path }).snapshot(target.stream, cluster.policy.snapshotTimeoutMs);
      return { ok: true, location: target.location, via: describeMember(via) };
    } catch (error) {
      await target.discard();
      if (!(error instanceof EtcdCallError)) throw error;
      problems.push(`${describeMember(via)} over ${p.path} ${p.endpoint}: ${error.failure.message}`);
    }
  }
  return { ok: false, problem: problems.length ? problems.join('; ') : 'no healthy member to take it through' };
}
