// Stands in for the runtime's intake in the request watcher's tests: a report opens (or joins) an
// incident for its Machine in a real SQLite store, and nothing runs it; a test writes the incident's
// endings into the store as the steps write them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RemediationRequest } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { createInProcessBus } from '../../../functions/adapters/local/in-process-bus.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import type { Clock } from '../../../functions/ports/clock.ts';
import type { Incident, IncidentStore } from '../../../functions/ports/incident-store.ts';
import type { Scheduler } from '../../../functions/ports/scheduler.ts';
import type { ReportSink } from '../../../infra/kubernetes/request-watcher.ts';
import type { Teardown } from './teardown.ts';

const noScheduler: Scheduler = { schedule: () => Promise.resolve(), cancel: () => Promise.resolve() };

/** The cluster id a request is reported for: `<namespace>/<cluster>`. */
export const namespacedClusterId = (request: RemediationRequest): string => `${request.namespace}/${request.clusterName}`;

/** A state file in a directory of its own, both gone after the test. */
export function tempStore(prefix: string, teardown: Teardown): SqliteIncidentStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  teardown.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const store = openSqliteStore({ path: path.join(dir, 'state.sqlite') });
  teardown.push(() => store.close());
  return store;
}

export interface StoreReports {
  sink: ReportSink;
  /** The Machines reported, in order. */
  reported: string[];
}

/** Each report opens or joins the incident of its Machine at `clock`'s now; `opened` sees each one. */
export function reportsToStore(store: IncidentStore, options: { clock?: Clock; opened?: (incident: Incident) => Promise<void> } = {}): StoreReports {
  const clock = options.clock ?? systemClock;
  const reported: string[] = [];
  const sink: ReportSink = {
    store,
    bus: createInProcessBus({ handlers: {}, onDeadLetter: () => undefined, onError: () => undefined }),
    scheduler: noScheduler,
    clock,
    async submit(detail) {
      const { clusterId, target } = detail as { clusterId: string; target: { machineName: string } };
      reported.push(target.machineName);
      const { incident } = await store.openOrJoin({ clusterId, targetKey: `machineName=${target.machineName}`, target, reason: 'test', now: clock.now() });
      await options.opened?.(incident);
    },
  };
  return { sink, reported };
}
