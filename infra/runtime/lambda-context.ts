// A Lambda context for running the functions' handlers in this process.
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

export const localContext = (functionName: string): Context => ({
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
  memoryLimitInMB: '256',
  awsRequestId: randomUUID(),
  logGroupName: `/local/${functionName}`,
  logStreamName: 'local',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 900_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});
