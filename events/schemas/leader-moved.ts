import { z } from 'zod';
import { MAX_MILLIS } from './cluster-view.ts';
import { envelopeShape, memberIdSchema, pathNameSchema } from './common.ts';

export const leaderMovedSchema = z
  .object({
    ...envelopeShape,
    from: memberIdSchema.describe('The leader before the move.'),
    to: memberIdSchema.describe('The leader after the move.'),
    path: pathNameSchema.describe('The path that reached the old leader.'),
    tookMs: z.number().nonnegative('must be ≥ 0').max(MAX_MILLIS, `must be at most ${MAX_MILLIS} ms (a day)`).describe('How long MoveLeader took.'),
  })
  .describe('Leadership moved off the target.');
