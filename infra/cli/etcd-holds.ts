// Where pause and resume write beside the store: the holds in each named cluster's own etcd, under
// its guard prefix, where every remediator of that cluster reads them whatever its state file. The
// clusters come from run's config (--config) or from the cluster flags (--endpoints, --kubeconfig);
// each is asked through its healthy members, as the lock is.
import { createEtcdAccess } from '../../functions/adapters/local/etcd-access.ts';
import { kubeEtcdFor } from '../../functions/adapters/kube/kube-on-demand.ts';
import { etcdClusterGuard, guarded } from '../../functions/app/fleet/index.ts';
import type { HoldKind, HoldValue } from '../../functions/core/fleet/index.ts';
import { buildClusterView } from '../../functions/core/view/index.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';
import { UsageError } from './args.ts';
import { accessOptions, clusterAccessFromFlags, type AccessFlagValues } from './cluster-flags.ts';
import { ConfigError, loadConfig, withKubeAccess, type RunConfig } from './config.ts';
import { escapeControls } from './control-chars.ts';

/** The flags that name the clusters whose etcd a pause is written into. */
export const holdTargetFlags = { ...accessOptions, config: { type: 'string' } } as const;

export const holdTargetHelp = `  --config FILE   run's config: its state file, and every cluster's etcd (only --cluster's,
                  when given), is where the pause is written
  --endpoints URL[,URL…] (with --cacert, --cert, --key, --user, --password-file as remediate
                  takes them) or --kubeconfig F: also write it into that cluster's etcd, where
                  every remediator of the cluster sees it, whatever its state file`;

/** What was done in one cluster's etcd: changed or not, or why it could not be. */
export interface HoldWritten {
  clusterId: string;
  where: string;
  ok: boolean;
  changed?: boolean;
  failure?: string;
}

type StoreFlags = { state?: string | undefined; table?: string | undefined; region?: string | undefined; config?: string | undefined };

/** The store flags with run's config read for its state file, when --config is given. */
export function storeOf(values: StoreFlags): Omit<StoreFlags, 'config'> {
  if (values.config === undefined) return values;
  if (values.state !== undefined || values.table !== undefined)
    throw new UsageError('--config and --state or --table: run’s config names its state file; give one');
  return { state: configFrom(values.config).statePath };
}

/** run's config, a refusal naming the file and the field. */
function configFrom(file: string): RunConfig {
  try {
    return loadConfig(file);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`--config ${file}: ${error.message}`);
    throw error;
  }
}

/** The clusters whose etcd the flags name: none when no access flag is given. */
export async function holdClusters(values: AccessFlagValues & { config?: string | undefined }, clusterId: string | undefined): Promise<ClusterEntry[]> {
  if (values.config !== undefined) {
    if (values.endpoints !== undefined || values.kubeconfig !== undefined)
      throw new UsageError('--config and --endpoints or --kubeconfig: give run’s config, or one cluster’s flags');
    const config = configFrom(values.config);
    const all = await withKubeAccess(config);
    if (clusterId === undefined) return all;
    const one = all.filter((c) => c.clusterId === clusterId);
    if (one.length === 0)
      throw new UsageError(
        escapeControls(`--cluster: ${clusterId} is not a cluster of ${values.config} (it has ${all.map((c) => c.clusterId).join(', ') || 'none'})`),
      );
    return one;
  }
  if (values.endpoints === undefined && values.kubeconfig === undefined) return [];
  return [await clusterAccessFromFlags(values)];
}

/**
 * Writes (or lifts, with null) the hold of `kind` in each cluster's etcd. One cluster that does not
 * answer never stops the others: each result says what happened there.
 */
export async function writeHolds<K extends HoldKind>(clusters: readonly ClusterEntry[], kind: K, value: HoldValue<K> | null): Promise<HoldWritten[]> {
  if (clusters.length === 0) return [];
  const access = createEtcdAccess(await kubeEtcdFor(clusters));
  try {
    return await Promise.all(clusters.map((cluster) => writeOne(access.etcdFor, cluster, kind, value)));
  } finally {
    await access.close();
  }
}

async function writeOne<K extends HoldKind>(
  etcdFor: ReturnType<typeof createEtcdAccess>['etcdFor'],
  cluster: ClusterEntry,
  kind: K,
  value: HoldValue<K> | null,
): Promise<HoldWritten> {
  const sample = await etcdFor(cluster).prober.probe({ seeds: cluster.endpoints, deadlineMs: cluster.policy.callTimeoutMs, paths: cluster.policy.pathOrder });
  const view = buildClusterView(sample);
  const guard = etcdClusterGuard(etcdFor, cluster, view, undefined);
  const where = `etcd of cluster ${cluster.clusterId} (${cluster.policy.guardPrefix}/holds/${kind})`;
  const done = await guarded(guard, (g) => g.setHold(kind, value));
  return done.ok
    ? { clusterId: cluster.clusterId, where, ok: true, changed: done.value }
    : { clusterId: cluster.clusterId, where, ok: false, failure: `${done.failure.kind}: ${done.failure.message}` };
}

/** One line for each cluster whose etcd could not be written, for stderr. */
export const failedLines = (written: readonly HoldWritten[], lifting: boolean): string[] =>
  written
    .filter((w) => !w.ok)
    .map((w) =>
      escapeControls(
        lifting
          ? `not lifted in the ${w.where}: ${w.failure}; it still holds every remediator of cluster ${w.clusterId} there (run the command again once etcd answers)`
          : `not written into the ${w.where}: ${w.failure}; remediators of other state files do not see it there until it is (run the command again once etcd answers)`,
      ),
    );
