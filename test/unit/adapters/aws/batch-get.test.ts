// batchGet when DynamoDB keeps answering with UnprocessedKeys (throttling): it asks again with a
// doubling back-off, a bounded number of times, and fails as soon as the last call is answered,
// not after one more back-off. The real SDK client talks to an in-memory handler that answers as
// the BatchGetItem documentation says a throttled table does: every key comes back unprocessed.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { batchGet, type StoreContext } from '../../../../functions/adapters/aws/dynamodb-context.ts';
import { incidentKey } from '../../../../functions/adapters/aws/dynamodb-keys.ts';

const TABLE = 'remediator';

/** A DynamoDB endpoint that processes none of the keys it is asked for; counts the calls. */
function throttledTable(): { requestHandler: NonNullable<DynamoDBClientConfig['requestHandler']>; calls: () => number } {
  let calls = 0;
  const requestHandler: NonNullable<DynamoDBClientConfig['requestHandler']> = {
    async handle(request: { body?: unknown }) {
      calls++;
      const text = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body as Uint8Array);
      const body = JSON.parse(text) as { RequestItems: Record<string, { Keys: unknown[] }> };
      const keys = body.RequestItems[TABLE]!.Keys;
      const answer = { Responses: { [TABLE]: [] }, UnprocessedKeys: { [TABLE]: { Keys: keys, ConsistentRead: true } } };
      return {
        response: { statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: new TextEncoder().encode(JSON.stringify(answer)) },
      };
    },
  };
  return { requestHandler, calls: () => calls };
}

describe('batchGet on a throttled table', () => {
  const table = throttledTable();
  const client = new DynamoDBClient({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestHandler: table.requestHandler,
    maxAttempts: 1,
  });
  const ctx: StoreContext = { doc: DynamoDBDocumentClient.from(client), tableName: TABLE, clock: () => 0, finishedTtlMs: 1 };

  beforeEach(async () => {
    // The client's first call loads parts of the SDK on real I/O; once warm, a call is promises only.
    await ctx.doc.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: [incidentKey('warm-up')] } } }));
    // Only the back-off's timers are fake.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives up right after its tenth call, having waited 50 ms doubled nine times between them', async () => {
    const before = table.calls();
    const calls = () => table.calls() - before;
    let outcome: unknown;
    const done = batchGet(ctx, [incidentKey('a'), incidentKey('b'), incidentKey('c')]).then(
      () => (outcome = 'resolved'),
      (error: unknown) => (outcome = error),
    );

    // 50 + 100 + … + 12 800 ms: the waits between the ten calls, and nothing after the last.
    const betweenCalls = 50 * (2 ** 9 - 1);
    await vi.advanceTimersByTimeAsync(betweenCalls - 1);
    expect(calls()).toBe(9);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(calls()).toBe(10);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe(`table ${TABLE}: 3 keys still unprocessed after 10 BatchGetItem calls`);
    await done;
  });
});
