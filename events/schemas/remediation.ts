// Outcomes of the leader decision and of the remediation itself.
import { z } from 'zod';
import {
  envelopeShape,
  evidenceSchema,
  isoTimestampSchema,
  memberIdSchema,
  memberRefSchema,
  messageSchema,
  reasonCodeSchema,
  resolvedTargetSchema,
} from './common.ts';
import { MAX_MILLIS, text } from './cluster-view.ts';
import { MAX_TIMELINE_DETAIL_BYTES, MAX_TIMELINE_ENTRIES, TEXT_LIMITS } from '../../functions/core/common/index.ts';

const leaderMoveSchema = z.enum(['not-needed', 'moved', 'skipped']).describe("'skipped' means removal goes ahead without a move, e.g. the leader is gone.");

const explained = { reason: reasonCodeSchema, message: messageSchema, evidence: evidenceSchema };

export const remediationApprovedSchema = z
  .object({ ...envelopeShape, target: memberRefSchema, leaderMove: leaderMoveSchema, ...explained })
  .describe('The target may be removed now.');

export const remediationBlockedSchema = z
  .object({ ...envelopeShape, target: resolvedTargetSchema, ...explained })
  .describe('Remediation stopped for a reason that waiting will not fix; a human must look.');

export const remediationClosedSchema = z
  .object({ ...envelopeShape, target: resolvedTargetSchema, ...explained })
  .describe('The incident ended with nothing removed and nothing for a person to do: the target recovered, or the report was withdrawn.');

export const remediationFailedSchema = z
  .object({ ...envelopeShape, target: resolvedTargetSchema, ...explained })
  .describe('Remediation was attempted and failed.');

const snapshotTakenShape = {
  location: text(MAX_TIMELINE_DETAIL_BYTES).describe('A path, or an s3:// URL.'),
  bytes: z.number().int().positive(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('Of every byte of the file, as sha256sum says it.'),
  via: text(MAX_TIMELINE_DETAIL_BYTES).describe('The member and path it was streamed through.'),
  tookMs: z.number().int().nonnegative('must be ≥ 0').max(MAX_MILLIS, `must be at most ${MAX_MILLIS} ms (a day)`),
};
const takenKeys = Object.keys(snapshotTakenShape) as (keyof typeof snapshotTakenShape)[];

// One object rather than a union of two, so a bad field is named at its own path (a union's
// failure names only the union).
const snapshotSaidSchema = z
  .strictObject({
    ...(Object.fromEntries(takenKeys.map((k) => [k, snapshotTakenShape[k].optional()])) as {
      [K in keyof typeof snapshotTakenShape]: z.ZodOptional<(typeof snapshotTakenShape)[K]>;
    }),
    failed: text(MAX_TIMELINE_DETAIL_BYTES).optional().describe('Why none was taken; the policy did not require one, so the removal went on.'),
  })
  .superRefine((said, ctx) => {
    for (const key of takenKeys) {
      if (said.failed !== undefined && said[key] !== undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: 'must be absent when failed says why no snapshot was taken' });
      if (said.failed === undefined && said[key] === undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: 'is required for a snapshot taken (or say why none was, in failed)' });
    }
  })
  .describe('The snapshot taken before the removal (location, bytes, sha256, via, tookMs), or why none was (failed).');

export const remediationCompletedSchema = z
  .object({
    ...envelopeShape,
    target: memberRefSchema,
    leaderMove: leaderMoveSchema,
    newLeader: z.object({ id: memberIdSchema, name: text(TEXT_LIMITS.name) }).describe('The leader among the remaining members.'),
    timeline: z
      .array(z.object({ at: isoTimestampSchema, step: z.string().min(1).max(64), detail: text(MAX_TIMELINE_DETAIL_BYTES) }))
      .max(MAX_TIMELINE_ENTRIES)
      .describe('Each remediation step, in order; a long one keeps its first and last lines, and says how many went between.'),
    snapshot: snapshotSaidSchema.optional(),
  })
  .describe('The target member was removed and the cluster has a leader.');
