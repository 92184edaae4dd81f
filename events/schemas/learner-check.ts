// The periodic learner check on AWS: a scheduled round lists the registered clusters and asks for
// one check of each, so a slow cluster holds up no other.
import { z } from 'zod';
import { isoTimestampSchema, nonEmptyString } from './common.ts';

export const learnerCheckDueSchema = z
  .object({
    clusterId: nonEmptyString().describe('The etcd cluster, as named in the cluster directory.'),
    at: isoTimestampSchema.describe('When the round that asked for the check ran: a cluster is checked in the rounds its learnerCheckEveryMs falls in.'),
  })
  .describe(
    "A round of the periodic learner check asks for one cluster's check: its learners are probed, and one stuck past stuckLearnerAfterMs is removed, outside any incident.",
  );
