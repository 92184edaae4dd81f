// The baseline a function's cold start is held to: the AWS SDK's EventBridge client and the
// Powertools logger, nothing else, making the first call every function's first event leads to
// in the bench: a PutEvents, refused at the bench's endpoint.
import { Logger } from '@aws-lambda-powertools/logger';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';

const log = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'baseline' });
const client = new EventBridgeClient({});

export const handler = async (): Promise<void> => {
  log.debug('publishing');
  await client.send(
    new PutEventsCommand({ Entries: [{ Source: 'etcd-remediator', DetailType: 'Baseline', Detail: '{}', EventBusName: process.env.BUS_NAME ?? 'baseline' }] }),
  );
};
