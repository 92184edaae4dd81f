// Every item's key in the one table (single-table design), in one place. Item types:
//   incident#<id>              incident             the incident, its version, outbox, steps done, lease
//   incident#<id>              journal#<seq>        a journal line, in the order written
//   incident#<id>              marker#<step>        a step marker: at most one per incident and step
//   open#<clusterId>           <targetKey>          the one open incident of a target (the pointer)
//   lock#<clusterId>           lock                 the cluster lock: owner and lease
//   lock#<clusterId>           removals             a single-remediator cluster's removal record
//   learners#<clusterId>       sightings            when each learner of the cluster was first seen, and a version
//   hygiene#<clusterId>        record               leader hygiene's record of the cluster (JSON text), and a version
//   cluster#<clusterId>        identity             the etcd cluster_id it first answered with
//   cluster#<clusterId>        config               the directory's registration
//   instance#<instanceId>      member               intake lookup: instance to cluster and member
//   node#<nodeName>            member               intake lookup: node to cluster and member
//   deadletters                <seq>                a refused input, in the order received
//   counter#deadletters        counter              the dead letters' sequence
//   remediations#<c>#<target>  <at>                 the remediation ledger (KCP's retry budget)
//   fleet#pauses               fleet | storm-ended  the fleet-wide pause; the last storm a person ended
//   fleet#pauses               cluster#<clusterId>  one cluster's pause
//   fleet#openings             <clusterId>          the cluster's newest incident opening (storm guard)
//   fleet#slots                slot#<n>             a removal in flight: owner incident and lease
//   fleet#clusters             <clusterId>          the registered clusters, for the storm guard's count
import type { table } from './dynamodb-table.ts';

/** The table's key attributes by name: the builders below stop compiling if the table's names change. */
export type Key = Record<typeof table.partitionKey.name | typeof table.sortKey.name, string>;

/** Fixed width, so string order is numeric order. */
export const pad = (value: number, width: number): string => String(value).padStart(width, '0');

/** Parts joined by # in one key must not contain a bare #. */
const part = (value: string): string => value.replaceAll('%', '%25').replaceAll('#', '%23');

export const INCIDENT_SK = 'incident';
export const incidentKey = (incidentId: string): Key => ({ pk: `incident#${incidentId}`, sk: INCIDENT_SK });
export const journalKey = (incidentId: string, seq: number): Key => ({ pk: `incident#${incidentId}`, sk: `journal#${pad(seq, 12)}` });
export const markerKey = (incidentId: string, step: string): Key => ({ pk: `incident#${incidentId}`, sk: `marker#${step}` });
export const openPointerKey = (clusterId: string, targetKey: string): Key => ({ pk: `open#${clusterId}`, sk: targetKey });
export const openPointerPk = (clusterId: string): string => `open#${clusterId}`;
export const lockKey = (clusterId: string): Key => ({ pk: `lock#${clusterId}`, sk: 'lock' });
export const removalsKey = (clusterId: string): Key => ({ pk: `lock#${clusterId}`, sk: 'removals' });
export const learnerSightingsKey = (clusterId: string): Key => ({ pk: `learners#${clusterId}`, sk: 'sightings' });
export const hygieneRecordKey = (clusterId: string): Key => ({ pk: `hygiene#${clusterId}`, sk: 'record' });
export const maintenanceRecordKey = (clusterId: string): Key => ({ pk: `maintenance#${clusterId}`, sk: 'record' });
export const identityKey = (clusterId: string): Key => ({ pk: `cluster#${clusterId}`, sk: 'identity' });
export const clusterConfigKey = (clusterId: string): Key => ({ pk: `cluster#${clusterId}`, sk: 'config' });
export const instanceKey = (instanceId: string): Key => ({ pk: `instance#${instanceId}`, sk: 'member' });
export const nodeKey = (nodeName: string): Key => ({ pk: `node#${nodeName}`, sk: 'member' });
export const DEAD_LETTERS_PK = 'deadletters';
export const deadLetterKey = (seq: number): Key => ({ pk: DEAD_LETTERS_PK, sk: pad(seq, 12) });
export const deadLetterCounterKey: Key = { pk: 'counter#deadletters', sk: 'counter' };
export const remediationsPk = (clusterId: string, targetKey: string): string => `remediations#${part(clusterId)}#${part(targetKey)}`;
export const remediationKey = (clusterId: string, targetKey: string, at: number): Key => ({
  pk: remediationsPk(clusterId, targetKey),
  sk: pad(at, 15),
});

export const FLEET_PAUSES_PK = 'fleet#pauses';
export const FLEET_OPENINGS_PK = 'fleet#openings';
export const FLEET_SLOTS_PK = 'fleet#slots';
export const fleetPauseKey = (clusterId: string | undefined): Key => ({ pk: FLEET_PAUSES_PK, sk: clusterId === undefined ? 'fleet' : `cluster#${clusterId}` });
export const stormEndedKey: Key = { pk: FLEET_PAUSES_PK, sk: 'storm-ended' };
export const fleetOpeningKey = (clusterId: string): Key => ({ pk: FLEET_OPENINGS_PK, sk: clusterId });
export const removalSlotKey = (slot: number): Key => ({ pk: FLEET_SLOTS_PK, sk: `slot#${pad(slot, 4)}` });
export const FLEET_CLUSTERS_PK = 'fleet#clusters';
export const fleetClusterKey = (clusterId: string): Key => ({ pk: FLEET_CLUSTERS_PK, sk: clusterId });

/**
 * The index keys an incident carries: its state's partition ordered by opening, and its cluster's
 * ordered by its last write (byClusterSk, set again by every write), so a report reads the
 * cluster's recent incidents as one key range.
 */
export const incidentIndexKeys = (incident: { incidentId: string; clusterId: string; state: string; openedAt: number }) => ({
  gsi1pk: byStatePk(incident.state),
  gsi1sk: `${pad(incident.openedAt, 15)}#${incident.incidentId}`,
  gsi2pk: byClusterPk(incident.clusterId),
  gsi2sk: byClusterSk(incident.openedAt, incident.incidentId),
});
/** An incident's place in its cluster's partition: when it was last written. */
export const byClusterSk = (writtenAt: number, incidentId: string): string => `${pad(writtenAt, 15)}#${incidentId}`;
export const byStatePk = (state: string): string => `incidents#${state}`;

export const byClusterPk = (clusterId: string): string => `incidents-of#${clusterId}`;
