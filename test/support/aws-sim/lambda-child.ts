// A warm Lambda container for one function: imports the built bundle once, then runs each
// invocation its parent sends over IPC as Lambda would, `handler(event, context)`, one at a time.
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

interface Invoke {
  id: number;
  event: unknown;
  /** The same for every try of one asynchronous invocation, as Lambda keeps it. */
  requestId?: string;
}

const [bundle, functionName = 'function'] = process.argv.slice(2);
if (!bundle || !process.send) {
  console.error('usage: lambda-child.ts BUNDLE FUNCTION_NAME (with an IPC channel)');
  process.exit(2);
}
const send = process.send.bind(process);
const loaded = import(pathToFileURL(bundle).href) as Promise<{ handler: (event: unknown, context: unknown) => Promise<unknown> }>;

const context = (requestId: string = randomUUID()) => ({
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
  memoryLimitInMB: '512',
  awsRequestId: requestId,
  logGroupName: `/aws/lambda/${functionName}`,
  logStreamName: 'local',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 900_000,
});

// One invocation at a time, as one Lambda container serves them.
let queue = Promise.resolve();
process.on('message', (message: Invoke) => {
  queue = queue.then(async () => {
    try {
      const { handler } = await loaded;
      const result = await handler(message.event, context(message.requestId));
      send({ id: message.id, ok: true, result: result ?? null });
    } catch (error) {
      // As the Node.js runtime reports an unhandled error: its name as errorType, its message.
      const errorType = error instanceof Error ? error.name : 'Error';
      const errorMessage = error instanceof Error ? error.message : String(error);
      send({ id: message.id, ok: false, error: `${errorType}: ${errorMessage}`, errorType, errorMessage });
    }
  });
});
// The parent gone, the container goes too.
process.on('disconnect', () => process.exit(0));
send({ ready: true });
