// The local runtime over a state file on a real disk that fills up in the middle of a step: the
// step commits, then the disk fills before its outbox is cleared, so every delivery after it fails
// and the incident is left owing its outbox, with no timer to carry it on. The runtime says once
// that the file cannot be written, keeps its retries to the back-off, and carries the incident on
// within a back-off of space coming back, not a sweep interval later.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { incidentIdOf, type EventEnvelope } from '../../../events/catalogue.ts';
import type { ClusterEtcd } from '../../../functions/ports/cluster-etcd.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import { createLocalRuntime, type LocalRuntime } from '../../../infra/runtime/runtime.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import { fullDiskUnavailable, smallDisk, type SmallDisk } from '../../support/full-disk.ts';
import { testIncidentId } from '../../support/incident-ids.ts';
import { waitFor as until } from '../../../functions/lib/wait-for.ts';
import { silentEtcd, waitFor } from './helpers.ts';

const title = fullDiskUnavailable ? `local runtime on a full disk (skipped: ${fullDiskUnavailable})` : 'local runtime on a full disk';
const BACKOFF_MS = 200;

/** An etcd whose probe answers at once, with no member: enough for the chain to go on past it. */
const emptyEtcd = (): ClusterEtcd =>
  ({ prober: { probe: async () => ({ at: Date.now(), members: [], listFailures: [], seeds: [] }) } }) as unknown as ClusterEtcd;

describe.skipIf(fullDiskUnavailable !== undefined)(title, () => {
  let disk: SmallDisk;
  let runtime: LocalRuntime | undefined;

  beforeEach(() => {
    disk = smallDisk();
  });
  afterEach(async () => {
    await runtime?.stop({ drainTimeoutMs: 100 });
    runtime = undefined;
    disk.remove();
  });

  it('carries on an incident whose outbox the full disk kept it from clearing, once space is back', async () => {
    const notices: string[] = [];
    const handlerErrors: unknown[] = [];
    runtime = await createLocalRuntime({
      statePath: path.join(disk.dir, 'state.sqlite'),
      directory: createStaticDirectory([{ clusterId: 'c1', endpoints: ['http://127.0.0.1:1'], policy: parsePolicy() }]),
      etcdFor: emptyEtcd,
      redeliveryDelaysMs: [10, 10],
      // The regular sweep would carry the outbox out a minute later; the test needs it within seconds.
      sweepIntervalMs: 60_000,
      storeRetryDelayMs: BACKOFF_MS,
      logLevel: 'SILENT',
      onStateNotice: (line) => notices.push(line),
      onHandlerError: (_fn, error) => handlerErrors.push(error),
    });
    const events: EventEnvelope[] = [];
    let filledAt: number | undefined;
    runtime.bus.subscribe((event) => {
      events.push(event);
      // Published from the outbox after the commit, before the outbox is cleared: the disk fills right there.
      if (event.detailType === 'MembersProbed' && filledAt === undefined) {
        disk.fill();
        filledAt = Date.now();
      }
    });
    await runtime.start();
    const now = new Date().toISOString();
    await runtime.submit({ clusterId: 'c1', attempt: 0, at: now, target: { memberName: 'm1' }, reason: 'test', source: 'test', observedAt: now });
    const probed = () => events.filter((e) => e.detailType === 'MembersProbed').length;

    await waitFor(() => notices.length === 1, 'the state file problem to be said');
    expect(notices[0]).toBe(
      `state file ${path.join(disk.dir, 'state.sqlite')}: cannot write: disk full (SQLITE_FULL); retrying every 200ms; open incidents go on once it takes writes again`,
    );
    await waitFor(() => Date.now() - filledAt! >= 5 * BACKOFF_MS, 'five back-offs of outage');
    const outageMs = Date.now() - filledAt!;
    // The outbox is carried out again at most once a back-off (three deliveries of the first step, then the sweeps).
    expect(probed()).toBeLessThanOrEqual(3 + Math.ceil(outageMs / BACKOFF_MS) + 1);
    expect(handlerErrors).toEqual([]);
    expect(notices).toHaveLength(1);

    disk.free();
    const freedAt = Date.now();
    const after = (type: string) => events.find((e) => e.detailType !== 'MembersProbed' && e.detailType !== type && Date.parse(e.detail.at) >= freedAt);
    const next = await until(async () => after('MemberUnhealthy'), {
      timeoutMs: 10 * BACKOFF_MS + 3_000,
      what: 'the incident to go on past MembersProbed once space is back',
    });
    expect(incidentIdOf(next)).toBe(incidentIdOf(events.find((e) => e.detailType === 'MembersProbed')!));
    expect(next.detailType).not.toBe('RetryDue');
    expect(notices).toEqual([notices[0], expect.stringMatching(/^state file takes writes again after \d+s; open incidents go on$/)]);
  });

  it('a wait for an outcome that ends while the disk is full says why, and that the incident stays open', async () => {
    const statePath = path.join(disk.dir, 'state.sqlite');
    runtime = await createLocalRuntime({
      statePath,
      directory: createStaticDirectory([{ clusterId: 'c1', endpoints: ['http://127.0.0.1:1'], policy: parsePolicy() }]),
      etcdFor: silentEtcd,
      redeliveryDelaysMs: [10, 10],
      storeRetryDelayMs: BACKOFF_MS,
      logLevel: 'SILENT',
      onStateNotice: () => undefined,
    });
    await runtime.start();
    const idOf = { m1: testIncidentId(1), m2: testIncidentId(2) };
    const report = (memberName: keyof typeof idOf) => {
      const now = new Date().toISOString();
      return runtime!.submit({
        incidentId: idOf[memberName],
        clusterId: 'c1',
        attempt: 0,
        at: now,
        target: { memberName },
        reason: 'test',
        source: 'test',
        observedAt: now,
      });
    };
    await report('m1');
    await waitFor(async () => (await runtime!.store.getIncident(idOf.m1))?.state === 'open', 'the first incident to open');
    disk.fill();
    // A second report cannot open its incident: the store refuses the write.
    await report('m2');
    await waitFor(() => runtime!.store.outage !== undefined, 'the store to refuse a write');
    await expect(runtime.waitForOutcome({ clusterId: 'c1', incidentId: idOf.m1 }, 300)).rejects.toThrow(
      new RegExp(
        `^no outcome for cluster c1 within 300 ms: state file ${statePath}: cannot write: disk full \\(SQLITE_FULL\\) since \\S+; incident ${idOf.m1} stays open in ${statePath}, and the next start resumes it$`,
      ),
    );
  });
});
