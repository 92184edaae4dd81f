// The SDK clients of one container, made once: each keeps its connections warm across invocations.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { clientConfig, type Env } from './env.ts';

export interface ClientConfig {
  endpoint?: string;
  region?: string;
}

export const dynamoClient = (env: Env) => new DynamoDBClient(clientConfig(env, 'DYNAMODB'));
export const eventBridgeClient = (env: Env) => new EventBridgeClient(clientConfig(env, 'EVENTBRIDGE'));
export const schedulerClient = (env: Env) => new SchedulerClient(clientConfig(env, 'SCHEDULER'));
export const sqsClient = (env: Env) => new SQSClient(clientConfig(env, 'SQS'));
