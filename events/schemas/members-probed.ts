import { z } from 'zod';
import { clusterViewSchema } from './cluster-view.ts';
import { envelopeShape, resolvedTargetSchema } from './common.ts';

/**
 * The new view only: move-leader reads the views before it from the incident, which kept this one
 * too in the same write that published the event.
 */
export const membersProbedSchema = z
  .object({
    ...envelopeShape,
    target: resolvedTargetSchema,
    view: clusterViewSchema.describe('The cluster as this probe saw it: the newest view the incident holds.'),
  })
  .describe('Every member was probed; the view is ready for the leader decision.');
