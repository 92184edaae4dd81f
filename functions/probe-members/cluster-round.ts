// A scheduled round of probe-members on AWS: an EventBridge schedule rule hands it a fixed input,
// and it asks for one check of each registered cluster (an event routed back to probe-members),
// so one slow cluster holds up no other and a failed check is retried on its own. Reading the
// registrations' index needs no cluster access. The learner check, leader hygiene and maintenance each have one.
import { makeEvent, type EventEnvelope } from '../../events/catalogue.ts';
import { type Deps, iso } from '../app/common/index.ts';

/** The checks a round asks for: each names one cluster and the round's time (maintenance's also who asked). */
export type RoundCheck = 'LearnerCheckDue' | 'HygieneCheckDue' | 'MaintenanceDue';

/** Whether an invocation's event is this schedule rule's fixed input, and nothing else. */
export const isRoundInput = (input: { readonly etcdRemediator: string }, event: unknown): boolean =>
  typeof event === 'object' && event !== null && (event as Record<string, unknown>).etcdRemediator === input.etcdRemediator;

/** One round: a `check` per registered cluster; none when the clusters cannot be listed (`what` says which round warns). */
export async function askEveryCluster(
  deps: Pick<Deps, 'directory' | 'bus' | 'clock' | 'log'>,
  check: RoundCheck,
  what: string,
  askedBy = 'round',
): Promise<{ asked: number }> {
  const ids = await deps.directory.registeredClusterIds?.();
  if (ids === undefined) {
    deps.log.warn(`${what}: the registered clusters could not be listed; the next round tries again`);
    return { asked: 0 };
  }
  const at = iso(deps.clock.now());
  const events: EventEnvelope[] = ids.map((clusterId) =>
    check === 'MaintenanceDue' ? makeEvent(check, { clusterId, at, askedBy }) : makeEvent(check, { clusterId, at }),
  );
  if (events.length > 0) await deps.bus.publish(...events);
  return { asked: events.length };
}
