// probe-members' third duty on AWS: every HYGIENE_ROUND_MS a schedule rule's round asks for one
// leader-hygiene check of each registered cluster (HygieneCheckDue, routed back to probe-members),
// which runs only in the rounds the cluster's hygiene.checkEveryMs falls in.
import type { Deps } from '../app/common/index.ts';
import { HYGIENE_ROUND_INPUT } from '../core/hygiene/index.ts';
import { askEveryCluster, isRoundInput } from './cluster-round.ts';

/** The schedule rule's fixed input, and nothing else. */
export const isHygieneRound = (event: unknown): boolean => isRoundInput(HYGIENE_ROUND_INPUT, event);

export const hygieneRound = (deps: Pick<Deps, 'directory' | 'bus' | 'clock' | 'log'>): Promise<{ asked: number }> =>
  askEveryCluster(deps, 'HygieneCheckDue', 'leader hygiene round');
