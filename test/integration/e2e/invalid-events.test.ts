// Bad input gets an error naming the field, and a dead-letter record: nothing is dropped silently.
import fs from 'node:fs';
import { Logger } from '@aws-lambda-powertools/logger';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOT_AN_INCIDENT_ID } from '../../../functions/core/incident/incident-id.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import { createProbeMembersHandler } from '../../../functions/probe-members/handler.ts';
import { toEventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import { InvalidEventError } from '../../../functions/lambda/event-handler.ts';
import { localContext } from '../../../infra/runtime/lambda-context.ts';
import { createLocalRuntime, type LocalRuntime } from '../../../infra/runtime/runtime.ts';
import { createStaticDirectory } from '../../../functions/adapters/local/static-directory.ts';
import type { ClusterDeps } from '../../../functions/app/common/deps.ts';
import { testIncidentId } from '../../support/incident-ids.ts';

const at = '2026-01-01T00:00:00Z';

/** Only what an invalid event reaches: the dead-letter store and the clock. */
const quietDeps = (runtime: LocalRuntime) =>
  ({ store: runtime.store, clock: { now: () => Date.now() }, log: new Logger({ logLevel: 'SILENT' }) }) as unknown as ClusterDeps;
const valid = { clusterId: 'c1', target: { memberName: 'etcd-0' }, reason: 'r', source: 'test', observedAt: at, at };

describe('invalid events', () => {
  let dir: string;
  let runtime: LocalRuntime;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invalid-'));
    // No etcd is needed: nothing invalid gets that far.
    runtime = await createLocalRuntime({
      statePath: path.join(dir, 'state.sqlite'),
      directory: createStaticDirectory([{ clusterId: 'c1', endpoints: ['http://127.0.0.1:1'], policy: parsePolicy() }]),
      logLevel: 'SILENT',
    });
  });
  afterEach(async () => {
    await runtime.stop({ drainTimeoutMs: 1_000 });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['no target', { ...valid, target: {} }, 'target'],
    ['two targets', { ...valid, target: { memberName: 'a', nodeName: 'b' } }, 'target'],
    ['missing clusterId', { ...valid, clusterId: undefined }, 'clusterId'],
    ['bad time', { ...valid, observedAt: 'yesterday' }, 'observedAt'],
    ['negative attempt', { ...valid, attempt: -1 }, 'attempt'],
    // Ids are ours: one that climbs out of a directory is no id, whatever joins it to a path later.
    ['an incident id that is a path', { ...valid, incidentId: '../x' }, `incidentId: ${NOT_AN_INCIDENT_ID}`],
    ['an incident id in capitals', { ...valid, incidentId: testIncidentId(0xabc).toUpperCase() }, `incidentId: ${NOT_AN_INCIDENT_ID}`],
  ])('%s: rejected naming the field, kept as a dead letter', async (_name, detail, field) => {
    const error = await runtime.submit(detail).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidEventError);
    expect((error as Error).message).toContain(field);
    const dead = await runtime.store.listDeadLetters();
    expect(dead).toHaveLength(1);
    expect(dead[0]!.error).toBe((error as Error).message);
    expect(JSON.parse(dead[0]!.payload)).toEqual(JSON.parse(JSON.stringify(detail)));
    expect(await runtime.store.listIncidents()).toEqual([]);
  });

  it('a handler given an invalid EventBridge event throws naming the field and dead-letters it', async () => {
    const deps = quietDeps(runtime);
    const handler = createProbeMembersHandler(deps);
    const event = toEventBridgeEvent({
      detailType: 'RetryDue',
      detail: { incidentId: testIncidentId(1), clusterId: 'c1', attempt: 'x', at, reason: 'ETCD_TRANSIENT' },
    });

    await expect(handler(event, localContext('probe-members'))).rejects.toThrow(/attempt/);
    const dead = await runtime.store.listDeadLetters();
    expect(dead).toHaveLength(1);
    expect(dead[0]!.detailType).toBe('RetryDue');
    expect(dead[0]!.error).toMatch(/attempt/);
  });

  it('a handler given an event whose incident id is a path throws naming the field and dead-letters it, touching no incident', async () => {
    const handler = createProbeMembersHandler(quietDeps(runtime));
    const event = toEventBridgeEvent({ detailType: 'RetryDue', detail: { incidentId: '../x', clusterId: 'c1', attempt: 1, at, reason: 'ETCD_TRANSIENT' } });

    await expect(handler(event, localContext('probe-members'))).rejects.toThrow(`incidentId: ${NOT_AN_INCIDENT_ID}`);
    const dead = await runtime.store.listDeadLetters();
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ detailType: 'RetryDue', error: expect.stringContaining('incidentId') });
    expect(JSON.parse(dead[0]!.payload)).toMatchObject({ detail: { incidentId: '../x' } });
    expect(await runtime.store.listIncidents()).toEqual([]);
  });

  it('a handler refuses a detail type it does not take', async () => {
    const deps = quietDeps(runtime);
    const handler = createProbeMembersHandler(deps);
    const event = toEventBridgeEvent({ detailType: 'RetryRequested', detail: valid });
    await expect(handler(event, localContext('probe-members'))).rejects.toThrow(InvalidEventError);
    expect(await runtime.store.listDeadLetters()).toHaveLength(1);
  });
});
