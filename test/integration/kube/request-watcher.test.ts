// The request watcher against the FAKE API server's watch: a dropped watch is started again and
// resumes without losing or repeating a request; a watch too old for the server's history (410
// Gone) relists, and requests already reported are not reported again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_PLURAL } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startRequestWatcher, type RequestWatcher } from '../../../infra/kubernetes/request-watcher.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { requestsIn } from './remediation-requests.ts';
import { namespacedClusterId, reportsToStore } from './store-reports.ts';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('request watcher: dropped watches and 410 Gone', () => {
  let fake: KubeApiFake;
  let store: SqliteIncidentStore;
  let dir: string;
  let watcher: RequestWatcher;
  /** Every report the watcher made, by Machine. */
  let reported: string[];

  beforeAll(async () => {
    fake = await startKubeApiFake({ watchHistoryLimit: 5 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'request-watcher-'));
    store = openSqliteStore({ path: path.join(dir, 'state.sqlite') });
    const reports = reportsToStore(store);
    reported = reports.reported;
    watcher = startRequestWatcher({
      management: fake.kubeConfig(),
      runtime: reports.sink,
      clusterIdOf: namespacedClusterId,
      log: silent,
      restartDelayMs: 20,
      followIntervalMs: 100,
    });
    await watcher.ready;
  });
  afterAll(async () => {
    await watcher?.stop();
    await store?.close();
    await fake?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const requests = () => requestsIn(fake.kubeConfig(), 'default');
  const create = (name: string) => requests().create(name, 'wl');
  /** LISTs of the requests (not watches): the informer lists once, then again only after 410 Gone. */
  const lists = () => fake.requests.filter((r) => r.method === 'GET' && !r.watch && r.path.endsWith(`/${REQUEST_PLURAL}`)).length;
  const followed = (name: string) => requests().statusWith(name, (s) => Boolean(s.incidentId), `the request ${name} to be followed`);

  it('reports a request, then, after the watch is dropped, the next one, each exactly once', async () => {
    await create('wl-cp-1');
    await followed('wl-cp-1');
    const listed = lists();
    fake.dropWatches('reset');
    await create('wl-cp-2');
    await followed('wl-cp-2');
    expect(reported).toEqual(['wl-cp-1', 'wl-cp-2']);
    // Resumed from its resourceVersion: no second list.
    expect(lists()).toBe(listed);
  });

  it('relists after 410 Gone: a request made while the watch was down is reported, the others are not again', async () => {
    const listedBefore = lists();
    // The watch goes down and stays down while requests are made and the history is compacted.
    fake.watchesRefused = true;
    fake.dropWatches('reset');
    await create('wl-cp-3');
    for (let i = 0; i < 6; i += 1) await create(`other-${i}`);
    fake.compactWatchHistory();
    fake.watchesRefused = false;
    await followed('wl-cp-3');
    await waitFor(async () => (reported.length === 9 ? true : undefined), { timeoutMs: 10_000, what: 'every request reported' });
    expect(reported.filter((m) => m.startsWith('wl-'))).toEqual(['wl-cp-1', 'wl-cp-2', 'wl-cp-3']);
    expect(new Set(reported).size).toBe(reported.length);
    // The resumed watch was too old for the history: the informer listed again.
    expect(lists()).toBeGreaterThan(listedBefore);
  });
});
