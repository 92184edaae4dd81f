// When a database needs maintenance: the policy's maintenance block (core/policy, where the
// thresholds are set against the tools others run), and etcd's own default quota.
import type { ReasonCode } from '../common/index.ts';
import { defaultPolicy, type Policy } from '../policy/index.ts';

export type MaintenanceRules = Policy['maintenance'];

export const MAINTENANCE_DEFAULTS: MaintenanceRules = defaultPolicy.maintenance;

/** etcd's default --quota-backend-bytes: 2 GiB. */
export const ETCD_DEFAULT_QUOTA_BYTES = 2 * 1024 * 1024 * 1024;

/** The retries that wait on a maintenance, and ask for it each time: NOSPACE's. */
export const waitsOnMaintenance = (reason: ReasonCode): boolean => reason === 'NOSPACE_CLEARING';
