// The Lambda entry of probe-members: its handler over the AWS adapters, and the scheduled rounds
// of the learner check (learner-round.ts) and of leader hygiene (hygiene-round.ts), each told by
// its schedule rule's fixed input.
import type { Context } from 'aws-lambda';
import type { Deps } from '../app/common/index.ts';
import { awsDepsFromEnv } from '../aws-wiring/pipeline-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createProbeMembersHandler } from './handler.ts';
import { hygieneRound, isHygieneRound } from './hygiene-round.ts';
import { isLearnerCheckRound, learnerCheckRound } from './learner-round.ts';

let deps: Deps | undefined;
const depsOnce = (): Deps => (deps ??= awsDepsFromEnv(process.env, 'probe-members'));
const events = lambdaEntry(depsOnce, createProbeMembersHandler);

export const handler = async (event: unknown, context: Context): Promise<unknown> => {
  if (isLearnerCheckRound(event)) return learnerCheckRound(depsOnce());
  if (isHygieneRound(event)) return hygieneRound(depsOnce());
  return events(event, context);
};
