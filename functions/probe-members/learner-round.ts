// probe-members' second duty on AWS: every LEARNER_CHECK_ROUND_MS a schedule rule's round asks
// for one learner check of each registered cluster (LearnerCheckDue, routed back to probe-members).
import type { Deps } from '../app/common/index.ts';
import { LEARNER_CHECK_ROUND_INPUT } from '../core/learners/index.ts';
import { askEveryCluster, isRoundInput } from './cluster-round.ts';

/** The schedule rule's fixed input, and nothing else. */
export const isLearnerCheckRound = (event: unknown): boolean => isRoundInput(LEARNER_CHECK_ROUND_INPUT, event);

export const learnerCheckRound = (deps: Pick<Deps, 'directory' | 'bus' | 'clock' | 'log'>): Promise<{ asked: number }> =>
  askEveryCluster(deps, 'LearnerCheckDue', 'learner check round');
