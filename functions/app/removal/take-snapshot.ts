// Step 3 of remediation, when the policy asks for it: a snapshot of the keyspace through the
// healthiest member other than the target, before anything is removed. Each healthy member is
// tried over each path that answered, best first; the bytes are counted and hashed as they pass.
import { rankMoveCandidates } from '../../core/plan/index.ts';
import type { SnapshotTaken } from '../../core/incident/index.ts';
import { SNAPSHOT_NOT_OVER_RELAY, type SnapshotFailure, type SnapshotTry } from '../../core/removal/index.ts';
import { describeMember, type ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import { EtcdCallError } from '../../ports/etcd.ts';
import type { SnapshotSubject, SnapshotTarget } from '../../ports/snapshots.ts';
import type { ClusterDeps, Deps } from '../common/index.ts';
import { snapshotMeter } from './snapshot-meter.ts';

export type SnapshotOutcome = ({ ok: true } & SnapshotTaken) | { ok: false; failure: SnapshotFailure };

/** The member about to be removed, by id too, so it is never the one streamed through. */
export type SnapshotOf = SnapshotSubject & { memberId: string };

const said = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export async function takeSnapshot(deps: ClusterDeps, cluster: ClusterEntry, view: ClusterView, subject: SnapshotOf): Promise<SnapshotOutcome> {
  const store = deps.snapshots;
  if (!store) return { ok: false, failure: { kind: 'no-store' } };
  const { transport } = deps.etcdFor(cluster);
  const tries: SnapshotTry[] = [];
  for (const via of rankMoveCandidates(view, subject.memberId)) {
    for (const p of via.paths.filter((x) => x.reachability === 'ok')) {
      // The relay runs etcdctl in a pod and hands back its output: it has no stream to give.
      if (p.path === 'exec-relay') {
        tries.push({ member: describeMember(via), path: p.path, endpoint: p.endpoint, failure: { kind: 'other', message: SNAPSHOT_NOT_OVER_RELAY } });
        continue;
      }
      let target: SnapshotTarget;
      try {
        target = await store.open({ clusterId: subject.clusterId, incidentId: subject.incidentId, member: subject.member });
      } catch (error) {
        // Where the snapshot goes is ours, not etcd's: no other member will fix it, so say it and stop.
        return { ok: false, failure: { kind: 'store', store: store.describe, said: said(error), tries } };
      }
      const started = deps.clock.now();
      const meter = snapshotMeter(target.stream);
      try {
        await transport.client({ endpoint: p.endpoint, path: p.path }).snapshot(meter.stream, cluster.policy.snapshotTimeoutMs);
        await target.keep(meter.sha256());
        return {
          ok: true,
          location: target.location,
          via: `${describeMember(via)} over ${p.path}`,
          bytes: meter.bytes(),
          sha256: meter.sha256(),
          tookMs: deps.clock.now() - started,
        };
      } catch (error) {
        await discard(deps, target);
        // The transport wraps every error it sees, the store's too: the meter knows whose it was.
        const storeError = meter.storeError();
        if (storeError) return { ok: false, failure: { kind: 'store', store: store.describe, said: storeError.message, tries } };
        if (!(error instanceof EtcdCallError)) return { ok: false, failure: { kind: 'store', store: store.describe, said: said(error), tries } };
        tries.push({ member: describeMember(via), path: p.path, endpoint: p.endpoint, failure: error.failure });
      }
    }
  }
  return { ok: false, failure: { kind: 'members', tries } };
}

/** A discard that fails leaves a partial for a person to see; it is no reason to fail the step. */
async function discard(deps: Deps, target: SnapshotTarget): Promise<void> {
  try {
    await target.discard();
  } catch (error) {
    deps.log.warn('partial snapshot not discarded', { location: target.location, error: said(error) });
  }
}
