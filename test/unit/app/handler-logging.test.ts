// One logger per invocation: what the app logs carries the Lambda context and the incident id.
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, expect, it, vi } from 'vitest';
import { createProbeMembersHandler } from '../../../functions/probe-members/handler.ts';
import { toEventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import { localContext } from '../../../infra/runtime/lambda-context.ts';
import { testIncidentId } from '../../support/incident-ids.ts';
import { harness, T0, type Harness } from './harness.ts';

/** An id in the shape of ours that no store holds. */
const NO_SUCH_INCIDENT = testIncidentId(404);

let h: Harness;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
});

it("the app's log lines carry the Lambda context and the incident id, and the id does not leak into the next invocation", async () => {
  h = harness();
  const { incident } = await h.deps.store.openOrJoin({
    clusterId: 'c1',
    targetKey: 'memberName=etcd-0',
    target: { memberName: 'etcd-0' },
    reason: 'r',
    now: T0,
  });
  const lines: string[] = [];
  // Powertools writes JSON lines through a Console bound to stdout (info) and stderr (warn, error).
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
  }
  const handler = createProbeMembersHandler({ ...h.deps, log: new Logger({ serviceName: 'probe-members', logLevel: 'INFO' }) });
  const retryDue = (incidentId: string) =>
    toEventBridgeEvent({
      detailType: 'RetryDue',
      detail: { incidentId, clusterId: 'c1', attempt: 7, at: new Date(T0).toISOString(), reason: 'ELECTION_IN_PROGRESS' },
    });

  // A stale attempt: the app logs that it ignored the event, through the handler's logger.
  await handler(retryDue(incident.incidentId), localContext('probe-members'));
  await handler(retryDue(NO_SUCH_INCIDENT), localContext('probe-members'));
  vi.restoreAllMocks();

  const logged = lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const stale = logged.find((l) => String(l.message).includes('stale'));
  expect(stale).toMatchObject({ incidentId: incident.incidentId, attempt: 7, function_name: 'probe-members', service: 'probe-members' });
  const notFound = logged.find((l) => String(l.message).includes('not found'));
  expect(notFound).toMatchObject({ incidentId: NO_SUCH_INCIDENT, function_name: 'probe-members' });
  expect(logged.filter((l) => l.incidentId === incident.incidentId)).toHaveLength(1);
});
