// `watch --bus NAME --table NAME`: report requests to a deployed stack instead of the embedded
// runtime. Each request becomes a MemberUnhealthy on the stack's EventBridge bus; its incident is
// followed in the stack's DynamoDB table, and withdrawn there when the request is deleted early.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { makeEvent, type DetailOf } from '../../events/catalogue.ts';
import { parseEvent } from '../../events/validate.ts';
import { createDynamoIncidentStore } from '../../functions/adapters/aws/dynamodb-store.ts';
import { createEventBridgeBus } from '../../functions/adapters/aws/eventbridge-bus.ts';
import { systemClock } from '../../functions/lib/system-clock.ts';
import type { Scheduler } from '../../functions/ports/scheduler.ts';
import type { ReportSink } from '../kubernetes/request-watcher.ts';

/**
 * Waits belong to the stack's own functions. A withdrawal schedules nothing; a wait an earlier
 * step left owed stays in the incident's outbox for the stack's next step to carry out.
 */
const stackOnlyScheduler: Scheduler = {
  schedule: () => Promise.reject(new Error('waits are scheduled by the stack, not by the watcher')),
  cancel: () => Promise.resolve(),
};

export function remoteSink(options: { busName: string; tableName: string; region?: string }): ReportSink & { close(): void } {
  // Without a region the SDK takes AWS_REGION, then the AWS config, as the aws CLI does.
  const config = options.region ? { region: options.region } : {};
  const dynamo = new DynamoDBClient(config);
  const events = new EventBridgeClient(config);
  const bus = createEventBridgeBus({ client: events, busName: options.busName });
  return {
    store: createDynamoIncidentStore({ client: dynamo, tableName: options.tableName }),
    bus,
    scheduler: stackOnlyScheduler,
    clock: systemClock,
    async submit(detail) {
      const parsed = parseEvent('MemberUnhealthy', { attempt: 0, ...(detail as object) });
      if (!parsed.ok) throw new Error(parsed.error.summary);
      await bus.publish(makeEvent('MemberUnhealthy', parsed.event.detail as DetailOf<'MemberUnhealthy'>));
    },
    close() {
      dynamo.destroy();
      events.destroy();
    },
  };
}
