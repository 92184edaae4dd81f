// The incident store on one DynamoDB table (see dynamodb-keys.ts for every item type). Every write
// is a single conditional write, where the sqlite store runs one statement or transaction.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { IncidentStore } from '../../ports/incident-store.ts';
import type { StoreContext } from './dynamodb-context.ts';
import { closeIncident, getIncident, listIncidents, updateIncident } from './dynamodb-incidents.ts';
import {
  endStorm,
  fleetPauses,
  noteOpened,
  registeredClusterIds,
  openedSince,
  releaseRemovalSlot,
  removalSlots,
  setPause,
  takeRemovalSlot,
} from './dynamodb-fleet.ts';
import { hygieneRecord, maintenanceRecord, saveHygieneRecord, saveMaintenanceRecord } from './dynamodb-cluster-records.ts';
import { appendJournal, journal, markStep, stepDone } from './dynamodb-journal.ts';
import { openOrJoin } from './dynamodb-open.ts';
import {
  acquireLock,
  knownIdentity,
  learnerSightings,
  listDeadLetters,
  putDeadLetter,
  recordRemediation,
  releaseLock,
  removalRecords,
  saveLearnerSightings,
  saveRemovalRecords,
  rememberIdentity,
  remediationHistory,
} from './dynamodb-records.ts';

export interface DynamoStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** How long closed incidents, their journal and dead letters are kept: 90 days unless said. */
  finishedTtlDays?: number;
  /** Epoch ms, for TTLs only. */
  clock?: () => number;
}

export function createDynamoIncidentStore(options: DynamoStoreOptions): IncidentStore {
  const days = options.finishedTtlDays ?? 90;
  if (!(days > 0)) throw new RangeError(`finishedTtlDays must be positive, got ${days}`);
  const ctx: StoreContext = {
    doc: documentClient(options.client),
    tableName: options.tableName,
    clock: options.clock ?? Date.now,
    finishedTtlMs: days * 86_400_000,
  };
  return {
    where: `table ${options.tableName}`,
    openOrJoin: (input) => openOrJoin(ctx, input),
    getIncident: (id) => getIncident(ctx, id),
    listIncidents: (filter) => listIncidents(ctx, filter),
    updateIncident: (id, patch, opts) => updateIncident(ctx, id, patch, opts),
    closeIncident: (id, input) => closeIncident(ctx, id, input),
    appendJournal: (id, entry) => appendJournal(ctx, id, entry),
    journal: (id) => journal(ctx, id),
    markStep: (id, entry) => markStep(ctx, id, entry),
    stepDone: (id, step) => stepDone(ctx, id, step),
    knownIdentity: (clusterId) => knownIdentity(ctx, clusterId),
    rememberIdentity: (clusterId, etcdClusterId, at) => rememberIdentity(ctx, clusterId, etcdClusterId, at),
    acquireLock: (clusterId, owner, leaseMs, now) => acquireLock(ctx, clusterId, owner, leaseMs, now),
    releaseLock: (clusterId, owner) => releaseLock(ctx, clusterId, owner),
    removalRecords: (clusterId) => removalRecords(ctx, clusterId),
    saveRemovalRecords: (clusterId, records) => saveRemovalRecords(ctx, clusterId, records),
    learnerSightings: (clusterId) => learnerSightings(ctx, clusterId),
    saveLearnerSightings: (clusterId, seen) => saveLearnerSightings(ctx, clusterId, seen),
    hygieneRecord: (clusterId) => hygieneRecord(ctx, clusterId),
    saveHygieneRecord: (clusterId, record, expectVersion) => saveHygieneRecord(ctx, clusterId, record, expectVersion),
    maintenanceRecord: (clusterId) => maintenanceRecord(ctx, clusterId),
    saveMaintenanceRecord: (clusterId, record, expectVersion) => saveMaintenanceRecord(ctx, clusterId, record, expectVersion),
    putDeadLetter: (input) => putDeadLetter(ctx, input),
    listDeadLetters: () => listDeadLetters(ctx),
    recordRemediation: (clusterId, targetKey, at) => recordRemediation(ctx, clusterId, targetKey, at),
    remediationHistory: (clusterId, targetKey, opts) => remediationHistory(ctx, clusterId, targetKey, opts),
    fleetPauses: () => fleetPauses(ctx),
    setPause: (clusterId, mark) => setPause(ctx, clusterId, mark),
    endStorm: (mark) => endStorm(ctx, mark),
    noteFleet: async () => {},
    fleetRoster: () => registeredClusterIds(ctx),
    noteOpened: (clusterId, openedAt) => noteOpened(ctx, clusterId, openedAt),
    openedSince: (since) => openedSince(ctx, since),
    takeRemovalSlot: (request) => takeRemovalSlot(ctx, request),
    releaseRemovalSlot: (owner) => releaseRemovalSlot(ctx, owner),
    removalSlots: (now) => removalSlots(ctx, now),
    // The client belongs to the caller (one per container, shared with the directory).
    close: async () => {},
  };
}

/** Undefined fields are dropped rather than refused; binary and numbers come back as written. */
export const documentClient = (client: DynamoDBClient): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
