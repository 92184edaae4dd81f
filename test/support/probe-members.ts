// Delivers one event to the probe-members work the catalogue routes it to, for the tests that
// drive the application directly (without the handler's middy edge).
import { workOf, type DetailTypesFor, type EventEnvelope } from '../../events/catalogue.ts';
import type { ClusterDeps } from '../../functions/app/common/index.ts';
import type { ProbeOutcome } from '../../functions/app/incident/index.ts';
import type { ReplacementVerdict } from '../../functions/core/replacement/index.ts';
import { probeMembersWorks } from '../../functions/probe-members/handler.ts';

type Input<T extends DetailTypesFor<'probe-members'>> = Pick<EventEnvelope<T>, 'detailType' | 'detail'>;

/** A report: the incident's outcome. */
export function probeMembers(deps: ClusterDeps, input: Input<'MemberUnhealthy'>): Promise<ProbeOutcome>;
/** A later look: the incident's outcome, or for an awaiting incident its replacement check's verdict. */
export function probeMembers(deps: ClusterDeps, input: Input<'RetryDue'>): Promise<ProbeOutcome | ReplacementVerdict['kind'] | undefined>;
export function probeMembers(deps: ClusterDeps, input: Input<'MemberUnhealthy' | 'RetryDue'>): Promise<unknown> {
  return deliverToProbeMembers(deps, input);
}

/** Any event probe-members takes: what its work returns. */
export function deliverToProbeMembers(deps: ClusterDeps, input: Input<DetailTypesFor<'probe-members'>>): Promise<unknown> {
  const work = workOf({ source: 'etcd-remediator', ...input } as EventEnvelope);
  if (!work || !(work in probeMembersWorks)) throw new Error(`probe-members takes no ${input.detailType} of this kind`);
  const run = probeMembersWorks[work as keyof typeof probeMembersWorks] as (deps: ClusterDeps, detail: unknown) => Promise<unknown>;
  return run(deps, input.detail);
}
