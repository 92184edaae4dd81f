import { z } from 'zod';
import { envelopeShape, isoTimestampSchema, messageSchema, reasonCodeSchema } from './common.ts';

export const retryRequestedSchema = z
  .object({
    ...envelopeShape,
    retryAt: isoTimestampSchema.describe('When the incident should be probed again.'),
    reason: reasonCodeSchema,
    message: messageSchema,
    reprobeNow: z.boolean().describe('Probe again at once instead of waiting for retryAt (bounded by policy).'),
    from: z.enum(['move-leader', 'remediate']).describe('The function that asked for the retry.'),
  })
  .describe('A step could not finish now; schedule another probe.');

export const retryDueSchema = z
  .object({
    ...envelopeShape,
    reason: reasonCodeSchema.describe('The reason the retry was requested.'),
  })
  .describe('A scheduled retry fired; probe the incident again.');
