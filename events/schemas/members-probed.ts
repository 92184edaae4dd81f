import { z } from 'zod';
import { clusterViewSchema } from './cluster-view.ts';
import { envelopeShape, resolvedTargetSchema } from './common.ts';
import { MAX_INCIDENT_VIEWS } from '../../functions/core/view-history.ts';

export const membersProbedSchema = z
  .object({
    ...envelopeShape,
    target: resolvedTargetSchema,
    view: clusterViewSchema.describe('The cluster as this probe saw it.'),
    previousViews: z
      .array(clusterViewSchema)
      .max(MAX_INCIDENT_VIEWS)
      .optional()
      .describe('Earlier views of this incident, oldest first, for evidence that needs samples over time.'),
  })
  .describe('Every member was probed; the view is ready for the leader decision.');
