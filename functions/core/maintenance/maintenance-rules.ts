// When a database needs maintenance: the policy's maintenance block (core/policy, where the
// thresholds are set against the tools others run), and etcd's own default quota.
import type { ReasonCode } from '../common/index.ts';
import { learnerCheckDue } from '../learners/index.ts';
import { defaultPolicy, type Policy } from '../policy/index.ts';

export type MaintenanceRules = Policy['maintenance'];

export const MAINTENANCE_DEFAULTS: MaintenanceRules = defaultPolicy.maintenance;

/** etcd's default --quota-backend-bytes: 2 GiB. */
export const ETCD_DEFAULT_QUOTA_BYTES = 2 * 1024 * 1024 * 1024;

/** The retries that wait on a maintenance, and ask for it each time: NOSPACE's. */
export const waitsOnMaintenance = (reason: ReasonCode): boolean => reason === 'NOSPACE_CLEARING';

/**
 * How often the AWS round runs (the EventBridge schedule rule's rate): the policy's default
 * checkEveryMs. A cluster asking for a shorter period is checked each round.
 */
export const MAINTENANCE_ROUND_MS = 300_000;

/** What the schedule rule hands probe-members, so it runs the round (and nothing else does). */
export const MAINTENANCE_ROUND_INPUT = { etcdRemediator: 'maintenance-round' } as const;

/** Who a round's MaintenanceDue says asked: a periodic look, not a step of a run or an incident. */
export const MAINTENANCE_ROUND_ASKER = 'maintenance-round';

/** Whether the round at `at` looks at a cluster maintained every `everyMs` (rounded up to whole rounds). */
export const maintenanceCheckDue = (at: number, everyMs: number): boolean => learnerCheckDue(at, everyMs, MAINTENANCE_ROUND_MS);
