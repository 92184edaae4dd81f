// Shared by the AWS adapter tests: SDK client settings for the fakes, and a template synthesized
// by CDK itself (a bus, one rule per function generated from the catalogue, the short-wait Pipe),
// so the fakes are tested against the shape a real synth produces.
import { Stack } from 'aws-cdk-lib';
import { testApp } from '../../infra/test-app.ts';
import { Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as pipes from 'aws-cdk-lib/aws-pipes';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { EVENT_SOURCE, functionNames, subscriptionsOf, type FunctionName } from '../../../events/catalogue.ts';
import { SHORT_WAIT_PIPE } from '../../../functions/adapters/aws/short-wait-queue.ts';
import { busNamesOf, type CfnTemplate } from '../../support/fakes/cfn-template.ts';

export const REGION = 'us-east-1';

/** Endpoint override and static credentials: the real client, talking to a fake on loopback. */
export const sdkConfig = (endpoint: string) => ({
  endpoint,
  region: REGION,
  credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake-secret' },
});

export interface SynthesizedStack {
  template: CfnTemplate;
  busName: string;
  /** Function → the logical id of its Lambda function, the key its rule target resolves to. */
  functionIds: Record<FunctionName, string>;
  queueId: string;
}

/** `extraRule` lets a test add a rule with its own pattern, as CDK would render it. */
export function synthesize(extraRule?: (stack: Stack, bus: events.EventBus, fn: lambda.IFunction) => void): SynthesizedStack {
  const stack = new Stack(testApp(), 'AwsAdapters');
  const bus = new events.EventBus(stack, 'Bus');
  const dlq = new sqs.Queue(stack, 'RuleDlq');
  const functionIds = {} as Record<FunctionName, string>;
  let first: lambda.IFunction | undefined;
  for (const name of functionNames) {
    const fn = new lambda.Function(stack, `${name}-fn`, {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => {}'),
    });
    first ??= fn;
    functionIds[name] = stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction);
    new events.Rule(stack, `${name}-rule`, {
      eventBus: bus,
      eventPattern: { source: [EVENT_SOURCE], detailType: subscriptionsOf(name) },
      targets: [new targets.LambdaFunction(fn, { deadLetterQueue: dlq, retryAttempts: 2 })],
    });
  }
  const queue = new sqs.Queue(stack, 'ShortWaits');
  new pipes.CfnPipe(stack, 'ShortWaitPipe', {
    roleArn: 'arn:aws:iam::000000000000:role/pipe',
    source: queue.queueArn,
    target: bus.eventBusArn,
    targetParameters: {
      inputTemplate: SHORT_WAIT_PIPE.inputTemplate,
      eventBridgeEventBusParameters: { detailType: SHORT_WAIT_PIPE.detailType, source: SHORT_WAIT_PIPE.source },
    },
  });
  if (extraRule && first) extraRule(stack, bus, first);
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  return {
    template,
    busName: busNamesOf(template)[0] ?? 'default',
    functionIds,
    queueId: stack.getLogicalId(queue.node.defaultChild as sqs.CfnQueue),
  };
}
