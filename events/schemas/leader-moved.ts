import { z } from 'zod';
import { envelopeShape, memberIdSchema, pathNameSchema } from './common.ts';

export const leaderMovedSchema = z
  .object({
    ...envelopeShape,
    from: memberIdSchema.describe('The leader before the move.'),
    to: memberIdSchema.describe('The leader after the move.'),
    path: pathNameSchema.describe('The path that reached the old leader.'),
    tookMs: z.number().nonnegative().describe('How long MoveLeader took.'),
  })
  .describe('Leadership moved off the target.');
