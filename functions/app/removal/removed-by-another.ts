// The target is already out of etcd, removed by another incident: whether that incident replaces
// the machine is a question for this state (is it ours?), then the rule is core's (replacement.ts).
import type { Decision } from '../../core/common/index.ts';
import { askedForMachine } from '../../core/incident/index.ts';
import { removalByAnother, removedByAnother, type RemovalRecord, type RemovedContext } from '../../core/replacement/index.ts';
import type { Incident } from '../../ports/incident-store.ts';
import type { Deps } from '../common/index.ts';

export async function afterRemovalByAnother(
  deps: Pick<Deps, 'store'>,
  incident: Incident,
  records: readonly RemovalRecord[],
  ctx: RemovedContext,
): Promise<Decision | undefined> {
  const by = removalByAnother(records, ctx);
  if (!by) return undefined;
  // An incident of this state replaces the machine as it completes (or did); one this state does
  // not hold may be a remediator with no Machine actuator at all.
  const other = await deps.store.getIncident(by.incidentId);
  const replacedByIt = other?.clusterId === incident.clusterId && (other.state === 'open' || askedForMachine(other.state));
  const { machineName } = incident.target;
  return removedByAnother(records, { ...ctx, replacedByIt, ...(machineName ? { machineName } : {}) });
}
