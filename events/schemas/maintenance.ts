// Maintenance's events: a step is asked for (MaintenanceDue), by an incident a NOSPACE alarm holds
// or by the step before it, each run's steps planned again from a fresh view; a run's end is said
// (MaintenanceEnded), done or not, with why.
import { z } from 'zod';
import { evidenceSchema, isoTimestampSchema, messageSchema, nonEmptyString, reasonCodeSchema } from './common.ts';

const clusterIdSchema = nonEmptyString().describe('The etcd cluster, as named in the cluster directory.');

export const maintenanceDueSchema = z
  .object({
    clusterId: clusterIdSchema,
    at: isoTimestampSchema.describe('When it was asked for.'),
    askedBy: nonEmptyString(200).describe(
      'Who asked: `incident:<id>` for an incident a NOSPACE alarm holds, `maintenance:<runId>` for the step before, `maintenance-round` for the periodic look on AWS (run only when the policy turns maintenance on and its checkEveryMs falls in the round), `maintenance-check` for the local one.',
    ),
  })
  .describe(
    "One step of a cluster's maintenance is due: the cluster is probed, the plan made again from what it shows and the run's journal, and its first step run (compact, defragment one member, move leadership off the leader, disarm, check a write).",
  );

export const maintenanceOutcomes = ['done', 'waiting', 'blocked', 'failed'] as const;

export const maintenanceEndedSchema = z
  .object({
    clusterId: clusterIdSchema,
    runId: nonEmptyString(128).describe("The run as the cluster's maintenance record keeps it."),
    at: isoTimestampSchema,
    outcome: z
      .enum(maintenanceOutcomes)
      .describe(
        'done: nothing more to do; waiting: another remediator holds the cluster lock, asked again later; blocked: a person must act; failed: a step failed.',
      ),
    reason: reasonCodeSchema,
    message: messageSchema,
    evidence: evidenceSchema.describe('The steps done, each with its time, and the plan that ended the run.'),
  })
  .describe("A cluster's maintenance run ended: its outcome, and why.");
