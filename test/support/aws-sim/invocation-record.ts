// Test support: the record Lambda hands an asynchronous invocation's on-failure destination, in
// the format AWS documents ("Capturing records of Lambda asynchronous invocations"; the CDK
// aws-lambda-destinations README shows the same): the request, why Lambda gave up, and the
// function's last error as the Node.js runtime reports an unhandled one.

export interface FailedInvocation {
  /** The failed function's ARN, as Lambda names it in the record (unqualified, then $LATEST). */
  functionArn: string;
  /** The same for every try of the invocation. */
  requestId: string;
  tries: number;
  /** Why Lambda gave up: every try failed (the default), or the event grew older than its maximum age. */
  condition?: 'RetriesExhausted' | 'EventAgeExceeded';
  event: unknown;
  errorType: string;
  errorMessage: string;
}

export interface InvocationRecord {
  version: '1.0';
  timestamp: string;
  requestContext: { requestId: string; functionArn: string; condition: NonNullable<FailedInvocation['condition']>; approximateInvokeCount: number };
  requestPayload: unknown;
  responseContext: { statusCode: 200; executedVersion: '$LATEST'; functionError: 'Unhandled' };
  responsePayload: { errorType: string; errorMessage: string; stackTrace: string[] };
}

export const failureRecord = (failed: FailedInvocation, at = new Date()): InvocationRecord => ({
  version: '1.0',
  timestamp: at.toISOString(),
  requestContext: {
    requestId: failed.requestId,
    functionArn: `${failed.functionArn}:$LATEST`,
    condition: failed.condition ?? 'RetriesExhausted',
    approximateInvokeCount: failed.tries,
  },
  requestPayload: failed.event,
  responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
  responsePayload: { errorType: failed.errorType, errorMessage: failed.errorMessage, stackTrace: [] },
});
