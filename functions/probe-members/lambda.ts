// The Lambda entry of probe-members: its handler over the AWS adapters, and the learner check's
// scheduled round (learner-round.ts).
import type { Context } from 'aws-lambda';
import type { Deps } from '../app/deps.ts';
import { awsDepsFromEnv } from '../aws-wiring/pipeline-deps.ts';
import { lambdaEntry } from '../aws-wiring/lambda-entry.ts';
import { createProbeMembersHandler } from './handler.ts';
import { isLearnerCheckRound, learnerCheckRound } from './learner-round.ts';

let deps: Deps | undefined;
const depsOnce = (): Deps => (deps ??= awsDepsFromEnv(process.env, 'probe-members'));
const events = lambdaEntry(depsOnce, createProbeMembersHandler);

export const handler = (event: unknown, context: Context): Promise<unknown> => (isLearnerCheckRound(event) ? learnerCheckRound(depsOnce()) : events(event, context));
