// Test support: the synthesized stack run on this machine as it would run deployed. Each function
// is its built bundle (the esbuild output the stack deploys) in a warm container process; the
// real AWS SDK clients inside talk to protocol-level fakes of EventBridge (routing by the
// template's own rules), Scheduler, SQS, the Pipe and S3 (the snapshot bucket), and to DynamoDB on
// dynalite. An invocation
// that failed every try goes where the template's EventInvokeConfig sends it: a function of the
// stack gets its invocation record, as Lambda's on-failure destination hands it over.
//
// The fakes follow AWS's documentation (each says which pages in its header): every hop, bus to
// Lambda, Scheduler to bus, SQS through the Pipe to bus, takes `hopLatencyMs` (150 ms by default,
// the published median of an EventBridge-to-Lambda delivery); Lambda retries after about 1 and 2
// minutes within the template's EventInvokeConfig; Scheduler fires within its minute; SQS
// redelivers after the visibility timeout and redrives per the queue's RedrivePolicy. A test
// compresses the services' own delays with `compression`.
import { join } from 'node:path';
import type { CfnTemplate } from '../fakes/cfn-template.ts';
import { startEventBridgeFake, type EventBridgeFake } from '../fakes/eventbridge-fake.ts';
import { connectPipe, pipeFromTemplate } from '../fakes/pipe-fake.ts';
import { startS3Fake, type S3Fake } from '../fakes/s3-fake.ts';
import { startSchedulerFake, type SchedulerFake } from '../fakes/scheduler-fake.ts';
import { startSqsFake, type SqsFake } from '../fakes/sqs-fake.ts';
import { startDynalite, type Dynalite, type DynaliteOptions, type DynamoExchange } from '../dynalite.ts';
import { failureRecord } from './invocation-record.ts';
import { startContainer, type EventInvokeConfig, type Invocation, type LambdaContainer } from './lambda-host.ts';

export interface DeployedStack {
  dynalite: Dynalite;
  tableName: string;
  busName: string;
  eventBridge: EventBridgeFake;
  scheduler: SchedulerFake;
  sqs: SqsFake;
  /** The snapshot bucket (the template's one AWS::S3::Bucket), by its name in `snapshotBucket`. */
  s3: S3Fake;
  snapshotBucket: string;
  /** By the function's POWERTOOLS_SERVICE_NAME: probe-members, move-leader, … (the first of each pool). */
  containers: Map<string, LambdaContainer>;
  /** Every warm container of each function, by the same name. */
  pools: Map<string, LambdaContainer[]>;
  /** Each function's logical id in the template, by the same name. */
  logicalIds: Map<string, string>;
  invocations: Invocation[];
  /** Every DynamoDB call the functions made, as dynalite answered it, in order (cost-count.ts counts the writes). */
  dynamo: (DynamoExchange & { at: number })[];
  /** Invocations whose every try failed, and where their record went: a queue's or a function's logical id. */
  failed: { functionName: string; error: string; destination: string }[];
  close(): Promise<void>;
}

type Resource = { Type: string; Properties: Record<string, unknown> };

const resources = (template: CfnTemplate, type: string): [string, Resource][] =>
  Object.entries((template as { Resources: Record<string, Resource> }).Resources).filter(([, r]) => r.Type === type);

const logicalIdOf = (value: unknown): string | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
  if (typeof v.Ref === 'string') return v.Ref;
  return Array.isArray(v['Fn::GetAtt']) && typeof v['Fn::GetAtt'][0] === 'string' ? v['Fn::GetAtt'][0] : undefined;
};

/** A function's EventInvokeConfig: its retries, its maximum event age, and where its failed invocations go (the destination's logical id). */
function invokeConfigOf(template: CfnTemplate, functionId: string): EventInvokeConfig & { destination: string } {
  const config = resources(template, 'AWS::Lambda::EventInvokeConfig').find(([, r]) => logicalIdOf(r.Properties.FunctionName) === functionId)?.[1].Properties;
  const destination = logicalIdOf((config?.DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined)?.OnFailure?.Destination);
  if (!destination) throw new Error(`${functionId}: the template sends its failed invocations nowhere`);
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  return { destination, maximumRetryAttempts: number(config?.MaximumRetryAttempts), maximumEventAgeInSeconds: number(config?.MaximumEventAgeInSeconds) };
}

/** The published median latency of an EventBridge-to-Lambda delivery, taken for every hop. */
export const HOP_LATENCY_MS = 150;

export interface DeployedStackOptions {
  /** Every event handed to its target twice at once (EventBridge delivers at least once). */
  deliverTwice?: boolean;
  /** Every short wait delivered twice by SQS (at least once), the copy right after the first. */
  shortWaitsTwice?: boolean;
  /** Each hop's latency, in ms (default HOP_LATENCY_MS). */
  hopLatencyMs?: number;
  /** Divides the services' own delays: Lambda's retry waits and event age, Scheduler's precision, SQS's visibility timeout, EventBridge's retry backoff (compression.ts). */
  compression?: number;
  /**
   * Warm containers per function (default 1), as Lambda scales out: deliveries go to them in
   * turn, so the two copies of a doubled delivery run at once in two processes.
   */
  containersPerFunction?: number;
  dynalite?: DynaliteOptions;
}

export async function startDeployedStack(template: CfnTemplate, assemblyDir: string, options: DeployedStackOptions = {}): Promise<DeployedStack> {
  const dynamo: DeployedStack['dynamo'] = [];
  const onReply = options.dynalite?.onReply;
  const dynalite = await startDynalite({
    ...options.dynalite,
    onReply: (exchange) => {
      dynamo.push({ ...exchange, at: Date.now() });
      return onReply?.(exchange);
    },
  });
  const tableName = await dynalite.createTable();
  const [bus] = resources(template, 'AWS::Events::EventBus');
  const busName = String(bus![1].Properties.Name);
  const latencyMs = options.hopLatencyMs ?? HOP_LATENCY_MS;
  const { compression } = options;
  const eventBridge = await startEventBridgeFake({ template, latencyMs, compression, ...(options.deliverTwice ? { duplicate: () => true } : {}) });
  const [, group] = resources(template, 'AWS::Scheduler::ScheduleGroup')[0]!;
  const groupName = String(group.Properties.Name);
  const scheduler = await startSchedulerFake({ eventBridge, groups: [groupName], autoRun: true, latencyMs, compression });
  const pipe = pipeFromTemplate(template);
  const queueName = pipe.sourceLogicalId ?? 'short-waits';
  const sqs = await startSqsFake({ queues: [queueName], template, autoRun: true, compression, ...(options.shortWaitsTwice ? { duplicate: () => true } : {}) });
  connectPipe({ sqs, queue: queueName, eventBridge, target: pipe, latencyMs });
  // A bucket's Ref is its name; CloudFormation makes one from the stack and logical id.
  const [bucket] = resources(template, 'AWS::S3::Bucket');
  const snapshotBucket = `etcdremediator-${(bucket?.[0] ?? 'snapshots').toLowerCase()}`;
  const s3 = await startS3Fake({ buckets: [snapshotBucket] });

  // Every value the template's Ref / GetAtt would resolve to when deployed, here.
  const refs: Record<string, string> = {
    [bus![0]]: busName,
    [queueName]: sqs.queueUrl(queueName),
    ...(bucket ? { [bucket[0]]: snapshotBucket } : {}),
  };
  const resolve = (key: string, value: unknown, logicalId: string): string => {
    if (typeof value === 'string') return value;
    const id = logicalIdOf(value);
    const type = id ? (template as { Resources: Record<string, Resource> }).Resources[id]?.Type : undefined;
    if (key === 'BUS_ARN') return eventBridge.busArn(busName);
    if (type === 'AWS::DynamoDB::Table') return tableName;
    if (id && refs[id]) return refs[id];
    if (type === 'AWS::IAM::Role') return `arn:aws:iam::000000000000:role/${id}`;
    if (type === 'AWS::SQS::Queue') return `arn:aws:sqs:us-east-1:000000000000:${id}`;
    throw new Error(`${logicalId}: environment ${key} = ${JSON.stringify(value)} has no local value`);
  };

  const invocations: Invocation[] = [];
  const failed: DeployedStack['failed'] = [];
  const containers = new Map<string, LambdaContainer>();
  const pools = new Map<string, LambdaContainer[]>();
  const logicalIds = new Map<string, string>();
  // By logical id: each function's warm containers, taken in turn.
  const nextOf = new Map<string, () => LambdaContainer>();
  /** Records handed to a destination function: Lambda invokes it asynchronously, so nobody waits; close does. */
  const handedOver = new Set<Promise<void>>();
  const arnOf = (logicalId: string) => `arn:aws:lambda:us-east-1:000000000000:function:${logicalId}`;
  for (const [logicalId, fn] of resources(template, 'AWS::Lambda::Function')) {
    const code = fn.Properties.Code as { S3Key?: string };
    const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDFAKE',
      AWS_SECRET_ACCESS_KEY: 'fake-secret',
      AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: eventBridge.endpoint,
      AWS_ENDPOINT_URL_SCHEDULER: scheduler.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, resolve(key, value, logicalId)])),
    };
    const name = String(env.POWERTOOLS_SERVICE_NAME);
    const bundle = join(assemblyDir, `asset.${String(code.S3Key).replace(/\.zip$/, '')}`, 'index.mjs');
    const { destination, ...eventInvokeConfig } = invokeConfigOf(template, logicalId);
    const pool: LambdaContainer[] = [];
    for (let i = 0; i < (options.containersPerFunction ?? 1); i++) {
      pool.push(
        await startContainer(name, bundle, {
          env,
          log: invocations,
          functionArn: arnOf(logicalId),
          onFailure: (gaveUp) => {
            failed.push({ functionName: gaveUp.functionName, error: gaveUp.error, destination });
            const target = nextOf.get(destination);
            if (!target) return;
            const handing = target().invokeAsync(failureRecord(gaveUp));
            handedOver.add(handing);
            void handing.finally(() => handedOver.delete(handing));
          },
          eventInvokeConfig,
          compression,
        }),
      );
    }
    containers.set(name, pool[0]!);
    pools.set(name, pool);
    let next = 0;
    const nextContainer = () => pool[next++ % pool.length]!;
    nextOf.set(logicalId, nextContainer);
    logicalIds.set(name, logicalId);
    // At least once: with deliverTwice the bus hands each event over twice, to two containers in turn.
    eventBridge.onTarget(logicalId, (event) => nextContainer().invokeAsync(event));
  }

  return {
    dynalite,
    tableName,
    busName,
    eventBridge,
    scheduler,
    sqs,
    s3,
    snapshotBucket,
    containers,
    pools,
    logicalIds,
    invocations,
    dynamo,
    failed,
    async close() {
      await Promise.allSettled([...handedOver]);
      await Promise.all([...pools.values()].flat().map((c) => c.close()));
      await Promise.all([eventBridge.close(), scheduler.close(), sqs.close(), s3.close()]);
      await dynalite.close();
    },
  };
}
