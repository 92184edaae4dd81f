// The incident store's contract: what every backend (SQLite locally, DynamoDB on AWS) must do,
// written once against the port. Each backend's test file runs it with a fixture of its own.
import { afterEach, beforeEach, describe } from 'vitest';
import { targetKeyOf } from '../../functions/core/view/target.ts';
import type { ClusterView } from '../../functions/core/view/view.ts';
import type { Incident, IncidentStore } from '../../functions/ports/incident-store.ts';
import { incidentCases } from './store-contract-incidents.ts';
import { fleetCases } from './store-contract-fleet.ts';
import { hygieneCases } from './store-contract-hygiene.ts';
import { maintenanceCases } from './store-contract-maintenance.ts';
import { recordCases } from './store-contract-records.ts';
import { recentCases } from './store-contract-recent.ts';

export interface StoreFixture {
  store: IncidentStore;
  /** Another handle on the same data, as a second process or Lambda container has. */
  another(): Promise<IncidentStore>;
  close(): Promise<void>;
}

/** What each test starts from: a store holding one open incident (c1, memberName=etcd-0). */
export interface ContractContext {
  store: IncidentStore;
  incident: Incident;
  another: () => Promise<IncidentStore>;
  /** RACERS handles, half on the store, half on another: for concurrency tests. */
  handles: () => Promise<IncidentStore[]>;
}

export const HOUR = 3_600_000;
/** How many callers race in the concurrency tests. */
export const RACERS = 10;

export const view = (at: number, note = ''): ClusterView => ({
  at,
  members: note
    ? [{ id: `m${at}`, name: note, peerUrls: [], clientUrls: [], isLearner: false, paths: [], reachable: false, started: true, healthy: false }]
    : [],
  leader: { consensus: 'none', reports: [] },
  quorum: { voting: 3, healthyVoting: 2, votingUp: 2, size: 2, ok: true },
  listFailures: [],
});

/** The incident every store test starts with: etcd-0 of c1, opened at 1 000. */
export const openFirstIncident = async (store: IncidentStore): Promise<Incident> =>
  (
    await store.openOrJoin({
      clusterId: 'c1',
      targetKey: targetKeyOf({ memberName: 'etcd-0' }),
      target: { memberName: 'etcd-0' },
      reason: 'kubelet gone',
      now: 1_000,
    })
  ).incident;

export function describeIncidentStoreContract(name: string, open: () => Promise<StoreFixture>): void {
  describe(`incident store contract: ${name}`, () => {
    let fixture: StoreFixture;
    let store: IncidentStore;
    let incident: Incident;
    const others: IncidentStore[] = [];
    const another = async (): Promise<IncidentStore> => {
      const other = await fixture.another();
      others.push(other);
      return other;
    };
    /** Half the racers on this handle, half on another. */
    const handles = async (): Promise<IncidentStore[]> => {
      const other = await another();
      return Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? store : other));
    };

    beforeEach(async () => {
      fixture = await open();
      store = fixture.store;
      incident = await openFirstIncident(store);
    });
    afterEach(async () => {
      for (const other of others.splice(0)) await other.close();
      await fixture.close();
    });

    const current = (): ContractContext => ({ store, incident, another, handles });
    incidentCases(current);
    recordCases(current);
    recentCases(current);
    fleetCases(current);
    hygieneCases(current);
    maintenanceCases(current);
  });
}
