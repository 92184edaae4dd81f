// The event each function's first call gets: a realistic one, the first detail type it subscribes
// to with its committed sample (events/samples), as EventBridge delivers it; the intake gets an EC2
// state change. Each reaches the handler's first AWS call, which the bench makes fail fast.
import { readFileSync } from 'node:fs';
import { functionNames, subscriptionsOf, type FunctionName } from '../../../events/catalogue.ts';
import { toEventBridgeEvent } from '../../../functions/shared/eventbridge.ts';

const samples = new URL('../../../events/samples/', import.meta.url);
const sample = (file: string): unknown => JSON.parse(readFileSync(new URL(file, samples), 'utf8'));

const isPipeline = (name: string): name is FunctionName => (functionNames as readonly string[]).includes(name);

export function firstEvent(name: string): { event: unknown; what: string } {
  if (name === 'intake') return { event: sample('intake/ec2-instance-state-change.json'), what: 'EC2 Instance State-change Notification' };
  if (!isPipeline(name)) throw new Error(`no first event for ${name}`);
  const detailType = subscriptionsOf(name)[0]!;
  return { event: toEventBridgeEvent({ detailType, detail: sample(`${detailType}.json`) }, 'us-east-1'), what: detailType };
}
