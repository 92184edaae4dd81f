// probe-members' second duty on AWS: every LEARNER_CHECK_ROUND_MS an EventBridge schedule rule
// hands it a fixed input, and it asks for one learner check of each registered cluster
// (LearnerCheckDue, routed back to probe-members), so one slow cluster holds up no other and a
// failed check is retried on its own. Reading the registrations' index needs no cluster access.
import { makeEvent, type EventEnvelope } from '../../events/catalogue.ts';
import type { Deps } from '../app/deps.ts';
import { iso } from '../app/incident-events.ts';
import { LEARNER_CHECK_ROUND_INPUT } from '../core/learner-check.ts';

/** The schedule rule's fixed input, and nothing else. */
export const isLearnerCheckRound = (event: unknown): boolean =>
  typeof event === 'object' && event !== null && (event as Record<string, unknown>).etcdRemediator === LEARNER_CHECK_ROUND_INPUT.etcdRemediator;

export async function learnerCheckRound(deps: Pick<Deps, 'directory' | 'bus' | 'clock' | 'log'>): Promise<{ asked: number }> {
  const ids = await deps.directory.registeredClusterIds?.();
  if (ids === undefined) {
    deps.log.warn('learner check round: the registered clusters could not be listed; the next round tries again');
    return { asked: 0 };
  }
  const at = iso(deps.clock.now());
  const events: EventEnvelope[] = ids.map((clusterId) => makeEvent('LearnerCheckDue', { clusterId, at }));
  if (events.length > 0) await deps.bus.publish(...events);
  return { asked: events.length };
}
