// When the periodic leader-hygiene check looks at a cluster on AWS: one scheduled round every
// HYGIENE_ROUND_MS asks for every registered cluster's check (as the learner check's rounds do). Pure.
import { learnerCheckDue } from '../learners/index.ts';

/** How often the AWS round runs: the EventBridge schedule rule's rate (the policy's default period). */
export const HYGIENE_ROUND_MS = 60_000;

/** What the schedule rule hands probe-members, so it runs the round (and nothing else does). */
export const HYGIENE_ROUND_INPUT = { etcdRemediator: 'hygiene-round' } as const;

/** Whether the round at `at` checks a cluster checked every `everyMs` (rounded up to whole rounds). */
export const hygieneCheckDue = (at: number, everyMs: number): boolean => learnerCheckDue(at, everyMs, HYGIENE_ROUND_MS);
