// What follows a removal: the replacement joined, or is overdue; and a stuck learner cleaned up.
import { z } from 'zod';
import { envelopeShape, evidenceSchema, isoTimestampSchema, memberRefSchema, messageSchema, reasonCodeSchema } from './common.ts';

const explained = { reason: reasonCodeSchema, message: messageSchema, evidence: evidenceSchema };

export const remediationReplacedSchema = z
  .object({
    ...envelopeShape,
    target: memberRefSchema.describe('The member that was removed.'),
    removedAt: isoTimestampSchema.describe('When the member was removed.'),
    replacedAfterMs: z.number().int().nonnegative().describe('The time to replacement: from the removal to the check that found the cluster whole.'),
    ...explained,
  })
  .describe('The cluster is back to the size it had before the removal, every member voting, started and answering: the incident is completed.');

export const replacementOverdueSchema = z
  .object({
    ...envelopeShape,
    target: memberRefSchema.describe('The member that was removed.'),
    removedAt: isoTimestampSchema.describe('When the member was removed.'),
    windowMs: z.number().int().nonnegative().describe('The policy window the replacement did not come within (replacement.windowMs).'),
    ...explained,
  })
  .describe('No replacement joined within the policy window after a removal: a person should look at the Machine and its kubeadm join.');

export const learnerRemovedSchema = z
  .object({
    ...envelopeShape,
    incidentId: envelopeShape.incidentId
      .optional()
      .describe('The incident that met the learner; absent when the periodic learner check (learnerCheckEveryMs) removed it, outside any incident.'),
    attempt: envelopeShape.attempt.optional().describe("The incident's attempt; absent with incidentId."),
    learner: memberRefSchema.describe('The learner removed; its name is empty when it never started.'),
    learnerSince: isoTimestampSchema.describe('When the learner was first seen.'),
    ...explained,
  })
  .describe(
    'A learner that never started or was never promoted within stuckLearnerAfterMs was removed (it had no vote), by an incident that met it or by the periodic learner check.',
  );
