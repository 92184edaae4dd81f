// schedule-retry's second duty on AWS: once a minute, EventBridge's scheduled rule asks it to
// resume incidents a crash left with nothing owed, running or scheduled (see app/incident/sweep.ts).
import type { Deps } from '../app/common/index.ts';
import { sweepBlind } from '../app/incident/index.ts';

/** The event an EventBridge schedule rule delivers. */
export const isScheduledSweep = (event: unknown): boolean => {
  const e = event as { source?: unknown; 'detail-type'?: unknown } | null;
  return e?.source === 'aws.events' && e['detail-type'] === 'Scheduled Event';
};

export async function sweepHandler(deps: Deps): Promise<{ resumed: number }> {
  const resumed = await sweepBlind(deps);
  if (resumed > 0) deps.log.warn('sweep resumed stalled incidents', { resumed });
  return { resumed };
}
