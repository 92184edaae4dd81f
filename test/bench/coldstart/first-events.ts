// The event each function's first call gets: a realistic one, the first detail type it subscribes
// to with its committed sample (events/samples), as EventBridge delivers it; the intake gets an EC2
// state change, step-failed the failure record of remediate's. Each reaches the handler's first
// AWS call, which the bench makes fail fast.
import { readFileSync } from 'node:fs';
import { functionNames, subscriptionsOf, type FunctionName } from '../../../events/catalogue.ts';
import { toEventBridgeEvent } from '../../../functions/lambda/eventbridge.ts';
import { failureRecord } from '../../support/aws-sim/invocation-record.ts';

const samples = new URL('../../../events/samples/', import.meta.url);
const sample = (file: string): unknown => JSON.parse(readFileSync(new URL(file, samples), 'utf8'));

const isPipeline = (name: string): name is FunctionName => (functionNames as readonly string[]).includes(name);

export function firstEvent(name: string): { event: unknown; what: string } {
  if (name === 'intake') return { event: sample('intake/ec2-instance-state-change.json'), what: 'EC2 Instance State-change Notification' };
  if (name === 'step-failed') {
    const failed = firstEvent('remediate').event;
    const functionArn = 'arn:aws:lambda:us-east-1:000000000000:function:remediate';
    return {
      event: failureRecord({ functionArn, requestId: 'bench', tries: 3, event: failed, errorType: 'Error', errorMessage: 'bench' }),
      what: 'a failure record of remediate',
    };
  }
  if (!isPipeline(name)) throw new Error(`no first event for ${name}`);
  const detailType = subscriptionsOf(name)[0]!;
  return { event: toEventBridgeEvent({ detailType, detail: sample(`${detailType}.json`) }, 'us-east-1'), what: detailType };
}
