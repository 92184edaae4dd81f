// Runs in its own thread with its own SQLite connection, so openOrJoin races for real.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteStore } from '../../../../functions/adapters/local/sqlite-store.ts';

interface RaceInput {
  path: string;
  calls: number;
  /** Int32Array over a SharedArrayBuffer: [0] becomes 1 when every worker may go. */
  go: Int32Array;
}

const { path, calls, go } = workerData as RaceInput;
const store = openSqliteStore({ path, busyTimeoutMs: 10_000 });
parentPort!.postMessage({ ready: true });
Atomics.wait(go, 0, 0);
const results: { incidentId: string; joined: boolean }[] = [];
for (let i = 0; i < calls; i++) {
  const { incident, joined } = await store.openOrJoin({
    clusterId: 'c1',
    targetKey: 'memberName=etcd-0',
    target: { memberName: 'etcd-0' },
    reason: 'race',
    now: Date.now(),
  });
  results.push({ incidentId: incident.incidentId, joined });
}
await store.close();
parentPort!.postMessage({ results });
