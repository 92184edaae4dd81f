// How `run` waits at the end of its stdin, on a real runtime whose etcd never answers: it stops at
// the bound and names what stays open, stops at a signal, and counts a report whose incident never
// opened (and never will: the bus is done with it) instead of waiting for it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drainIncidents } from '../../../infra/cli/run-drain.ts';
import type { LocalRuntime } from '../../../infra/runtime/runtime.ts';
import { testIncidentId } from '../../support/incident-ids.ts';
import { silentRuntime, waitFor } from './helpers.ts';

const never = new Promise<NodeJS.Signals>(() => undefined);
const INC_1 = testIncidentId(1);
const INC_LOST = testIncidentId(2);

describe('run: draining at the end of stdin', () => {
  let runtime: LocalRuntime;
  let close: () => Promise<void>;

  beforeEach(async () => {
    ({ runtime, close } = await silentRuntime('c1'));
    await runtime.start();
  });
  afterEach(async () => {
    await close();
  });

  const report = (incidentId: string, clusterId = 'c1') => {
    const now = new Date().toISOString();
    return runtime.submit({ incidentId, clusterId, attempt: 0, at: now, target: { memberName: 'm1' }, reason: 'test', source: 'test', observedAt: now });
  };
  const opened = (incidentId: string) => waitFor(async () => (await runtime.store.getIncident(incidentId))?.state === 'open', `incident ${incidentId} to open`);

  it('stops waiting past the deadline and its slack, and names the incident still open', async () => {
    await report(INC_1);
    await opened(INC_1);
    const began = Date.now();
    const end = await drainIncidents(runtime, [INC_1], { deadlineMs: () => 100, slackMs: 100, signal: never });
    expect(end).toMatchObject({ kind: 'bound', open: [{ incidentId: INC_1, state: 'open' }] });
    const { openedAt } = (await runtime.store.getIncident(INC_1))!;
    expect(Date.now()).toBeGreaterThanOrEqual(openedAt + 200);
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it('stops at a signal, naming the incident still open', async () => {
    await report(INC_1);
    await opened(INC_1);
    const end = await drainIncidents(runtime, [INC_1], { deadlineMs: () => 60_000, signal: Promise.resolve('SIGTERM') });
    expect(end).toMatchObject({ kind: 'signal', signal: 'SIGTERM', open: [{ incidentId: INC_1 }] });
  });

  it('does not wait for a report whose incident the bus never opened', async () => {
    // A cluster this runtime does not know: the intake fails it once, and nothing opens.
    await report(INC_LOST, 'elsewhere');
    const end = await drainIncidents(runtime, [INC_LOST], { deadlineMs: () => 60_000, signal: never });
    expect(end).toEqual({ kind: 'drained', finished: 0, neverOpened: [INC_LOST] });
  });

  it('with nothing open, is drained at once', async () => {
    await report(INC_1);
    await opened(INC_1);
    const incident = (await runtime.store.getIncident(INC_1))!;
    await runtime.store.closeIncident(INC_1, { outcome: 'blocked', result: { reason: 'TEST' }, now: Date.now(), expectVersion: incident.version });
    expect(await drainIncidents(runtime, [INC_1], { deadlineMs: () => 60_000, signal: never })).toEqual({ kind: 'drained', finished: 1, neverOpened: [] });
  });
});
