// When a database needs maintenance, as data. Read against the tools others run:
//  - etcd-defrag (ahrtr/etcd-defrag, by an etcd maintainer) documents the rule
//    `dbSize > dbQuota*80/100 || dbSize - dbSizeInUse > 200*1024*1024`: near the quota, or 200 MiB free;
//  - Deckhouse pages (D8KubeEtcdDatabaseSizeCloseToTheLimit) at 95 % of the quota, which is too
//    late to start a maintenance one member at a time;
//  - the etcd operators' defrag specs pair a free-space size with a ratio (128M and 0.7 by default).
// We take etcd-defrag's 80 % of the quota, and its 200 MiB free only when that is also half the file,
// so a large database with little churn is not rewritten for a small share of it.

export interface MaintenanceRules {
  /** Maintenance on for the cluster: fragmentation and the quota trigger it, not only NOSPACE. */
  enabled: boolean;
  /** Clear a NOSPACE alarm even with maintenance off (it blocks every remediation). */
  clearNoSpace: boolean;
  /** Free pages (dbSize - dbSizeInUse) at least this share of the file... */
  fragmentedShare: number;
  /** ...and at least this many bytes. */
  fragmentedMinBytes: number;
  /** dbSize at least this share of the quota. */
  nearQuotaShare: number;
  /** A member is defragmented at most once in this long (never held so for NOSPACE). */
  memberEveryMs: number;
  /** How long one member's defragmentation may take before the step gives up on it. */
  defragmentDeadlineMs: number;
}

const MiB = 1024 * 1024;

export const MAINTENANCE_DEFAULTS: MaintenanceRules = {
  enabled: false,
  clearNoSpace: true,
  fragmentedShare: 0.5,
  fragmentedMinBytes: 200 * MiB,
  nearQuotaShare: 0.8,
  memberEveryMs: 6 * 3_600_000,
  defragmentDeadlineMs: 10 * 60_000,
};

/** etcd's default --quota-backend-bytes: 2 GiB. */
export const ETCD_DEFAULT_QUOTA_BYTES = 2 * 1024 * MiB;
