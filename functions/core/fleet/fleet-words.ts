// What the fleet's gates say: who paused, when, why and how to resume; a storm's figures, when it
// can lift and what a person should do. Pure.
import { describeDuration, describeTime, listWords } from '../view/index.ts';
import type { FleetMark } from './fleet-gate.ts';
import type { FleetPolicy, Storm } from './fleet-storm.ts';

/** At most this many cluster ids in a sentence; the evidence holds more. */
const NAMED_CLUSTERS = 5;

const held = (planned: string): string => planned.replace(/[.\s]+$/, '');

export function pausedMessage(pause: { mark: FleetMark; fleetWide: boolean }, clusterId: string, planned: string, at: number): string {
  const { by, at: since, why } = pause.mark;
  const kept = keptIn(pause.mark);
  const scope = `${pause.fleetWide ? 'Remediation is paused fleet-wide' : `Remediation of cluster ${clusterId} is paused`}${kept ? ` (${kept})` : ''}`;
  const resume = pause.fleetWide ? 'etcd-remediator resume' : `etcd-remediator resume --cluster ${clusterId}`;
  return `${scope} by ${by} since ${describeTime(since)} ("${why}"), so nothing that changes the cluster runs; held: ${held(planned)}. Probes and plans go on; \`${resume}\` lets it go on; we look again at ${describeTime(at)}.`;
}

const namedClusters = (clusters: string[]): string => {
  const named = clusters.slice(0, NAMED_CLUSTERS);
  const more = clusters.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : listWords(named);
};

/** Where a hold read from etcd is kept and who wrote it, or undefined for the reader's own store. */
const keptIn = ({ key, where }: { key?: string | undefined; where?: string | undefined }): string | undefined =>
  key ? `kept in etcd key ${key}${where ? `, written from ${where}` : ''}` : where;

export function stormMessage(storm: Storm & { where?: string; key?: string }, policy: FleetPolicy, planned: string, at: number): string {
  const share = `${Math.round(policy.stormShare * 100)}% of ${storm.registered} registered, at least ${policy.stormMinClusters}`;
  const now =
    storm.count > storm.threshold
      ? `${storm.count} of ${storm.registered} registered clusters opened incidents within the last ${describeDuration(policy.stormWindowMs)}`
      : `${storm.count} of ${storm.registered} registered clusters opened incidents within the last ${describeDuration(policy.stormWindowMs)}, at or under the threshold since ${describeTime(storm.underFrom)}`;
  return (
    `Fleet storm since ${describeTime(storm.since)}${keptIn(storm) ? ` (${keptIn(storm)})` : ''}: ${now} (${namedClusters(storm.clusters)}), more than the storm threshold of ${storm.threshold} (${share}); ` +
    `new removals are deferred, so this one waits: ${held(planned)}. ` +
    `It lifts at ${describeTime(storm.liftsAt)} if no other cluster fails (${describeDuration(policy.stormCooldownMs)} after the count falls to ${storm.threshold} or fewer). ` +
    `Check the management plane's reachability to the zones of these clusters; if the failures are real, \`etcd-remediator resume --storm\` lets removals go on; \`etcd-remediator pause --why …\` holds everything. We look again at ${describeTime(at)}.`
  );
}

export function removalsInFlightMessage(holders: readonly { owner: string; clusterId: string }[], max: number, name: string, at: number): string {
  const named = holders.slice(0, NAMED_CLUSTERS).map((h) => `cluster ${h.clusterId} (incident ${h.owner})`);
  const more = holders.length > named.length ? ` and ${holders.length - named.length} more` : '';
  return `${holders.length} removal${holders.length === 1 ? ' is' : 's are'} in flight across the fleet (${named.join(', ')}${more}), the most maxRemovalsInFlight allows (${max}); ${name} is not removed yet, we look again at ${describeTime(at)}.`;
}

/** A storm said for a change that is not a removal (a defragmentation, a leadership move): it waits until the storm lifts. */
export function stormHoldsMessage(storm: Storm & { where?: string; key?: string }, policy: FleetPolicy, what: string): string {
  return (
    `Fleet storm since ${describeTime(storm.since)}${keptIn(storm) ? ` (${keptIn(storm)})` : ''}: ${storm.count} of ${storm.registered} registered clusters opened incidents within the last ${describeDuration(policy.stormWindowMs)} (${namedClusters(storm.clusters)}), the storm threshold being ${storm.threshold}; ` +
    `${what} until it lifts (at ${describeTime(storm.liftsAt)} if no other cluster fails), or a person runs \`etcd-remediator resume --storm\`.`
  );
}
