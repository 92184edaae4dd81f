// One racer for the removal slots, run in a worker thread with a store client of its own (a second
// `run` process on the same file, or another Lambda container on the same table). It takes a slot
// again and again; the shared counter says how many racers hold one at this instant.
import { workerData, parentPort } from 'node:worker_threads';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { openSqliteStore } from '../../../functions/adapters/local/sqlite-store.ts';
import type { FleetRecords } from '../../../functions/ports/fleet.ts';

export interface RacerData {
  store: { kind: 'sqlite'; path: string } | { kind: 'dynamo'; endpoint: string; table: string };
  name: string;
  max: number;
  rounds: number;
  /** [holding now, most seen holding at once] */
  counters: SharedArrayBuffer;
}

const data = workerData as RacerData;
const counters = new Int32Array(data.counters);

function open(): { records: FleetRecords; close(): Promise<void> } {
  if (data.store.kind === 'sqlite') {
    const store = openSqliteStore({ path: data.store.path, busyTimeoutMs: 10_000 });
    return { records: store, close: () => store.close() };
  }
  const client = new DynamoDBClient({ endpoint: data.store.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  return { records: createDynamoIncidentStore({ client, tableName: data.store.table }), close: async () => client.destroy() };
}

const opened = open();
const { records } = opened;
let taken = 0;
for (let round = 0; round < data.rounds; round++) {
  const owner = `${data.name}-${round}`;
  const got = await records.takeRemovalSlot({ owner, clusterId: data.name, max: data.max, leaseMs: 600_000, now: Date.now() });
  if (!got.taken) continue;
  taken++;
  // Counted only while the store says we hold it: taken before the count, released after it.
  const holding = Atomics.add(counters, 0, 1) + 1;
  let seen = Atomics.load(counters, 1);
  while (holding > seen && Atomics.compareExchange(counters, 1, seen, holding) !== seen) seen = Atomics.load(counters, 1);
  // The removal's work: long enough for the other racers to try meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 15));
  Atomics.sub(counters, 0, 1);
  await records.releaseRemovalSlot(owner);
}
await opened.close();
parentPort?.postMessage({ taken });
