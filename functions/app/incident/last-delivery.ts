// Where an event ends whose every delivery failed, on AWS (Lambda's on-failure destination, the
// step-failed function) and in the local runtime (its bus's last redelivery) alike: the incident
// is resumed or blocked STEP_FAILED (step-failed.ts), and a report that opened no incident is kept
// as a dead letter, so neither is lost.
import type { EventEnvelope, FunctionName } from '../../../events/catalogue.ts';
import type { Deps } from '../common/index.ts';
import { stepFailed, type StepFailedOutcome } from './step-failed.ts';

export async function lastDeliveryFailed(
  deps: Deps,
  functionName: FunctionName,
  event: EventEnvelope,
  error: unknown,
): Promise<StepFailedOutcome | 'dead-lettered'> {
  const outcome = await stepFailed(deps, functionName, event, error);
  if (outcome !== 'unknown-incident' || event.detailType !== 'MemberUnhealthy') return outcome;
  await deps.store.putDeadLetter({
    receivedAt: deps.clock.now(),
    source: `${functionName} handler`,
    detailType: event.detailType,
    payload: JSON.stringify(event),
    error: `failed on every delivery, and no incident was opened: ${error instanceof Error ? error.message : String(error)}`,
  });
  return 'dead-lettered';
}
