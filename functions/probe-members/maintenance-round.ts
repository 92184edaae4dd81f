// probe-members' fourth duty on AWS: every MAINTENANCE_ROUND_MS a schedule rule's round asks for
// one maintenance look at each registered cluster (MaintenanceDue, routed to remediate, which hosts
// maintain), run only for a cluster whose policy turns maintenance on and whose
// maintenance.checkEveryMs falls in the round. A NOSPACE that holds a removal asks on its own.
import type { Deps } from '../app/common/index.ts';
import { MAINTENANCE_ROUND_ASKER, MAINTENANCE_ROUND_INPUT } from '../core/maintenance/index.ts';
import { askEveryCluster, isRoundInput } from './cluster-round.ts';

/** The schedule rule's fixed input, and nothing else. */
export const isMaintenanceRound = (event: unknown): boolean => isRoundInput(MAINTENANCE_ROUND_INPUT, event);

export const maintenanceRound = (deps: Pick<Deps, 'directory' | 'bus' | 'clock' | 'log'>): Promise<{ asked: number }> =>
  askEveryCluster(deps, 'MaintenanceDue', 'maintenance round', MAINTENANCE_ROUND_ASKER);
