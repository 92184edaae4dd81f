// The Lambda entry of probe-members: its handler over the AWS adapters, cluster access included,
// and the scheduled rounds of the learner check (learner-round.ts), of leader hygiene
// (hygiene-round.ts) and of maintenance (maintenance-round.ts), each told by its schedule rule's fixed input.
import type { Context } from 'aws-lambda';
import { clusterDepsFromEnv } from '../aws-wiring/cluster-deps.ts';
import { lambdaEntry, once } from '../aws-wiring/lambda-entry.ts';
import { createProbeMembersHandler } from './handler.ts';
import { hygieneRound, isHygieneRound } from './hygiene-round.ts';
import { isLearnerCheckRound, learnerCheckRound } from './learner-round.ts';
import { isMaintenanceRound, maintenanceRound } from './maintenance-round.ts';

const deps = once(() => clusterDepsFromEnv(process.env, 'probe-members'));
const events = lambdaEntry(deps, createProbeMembersHandler);

export const handler = async (event: unknown, context: Context): Promise<unknown> => {
  if (isLearnerCheckRound(event)) return learnerCheckRound(deps());
  if (isHygieneRound(event)) return hygieneRound(deps());
  if (isMaintenanceRound(event)) return maintenanceRound(deps());
  return events(event, context);
};
