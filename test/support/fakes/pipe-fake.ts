// The EventBridge Pipe that carries short waits from the SQS fake to the EventBridge fake, as
// functions/adapters/aws/short-wait-queue.ts asks of the real one. Its target parameters come either from
// that contract or from the AWS::Pipes::Pipe of a synthesized template, so the stack's Pipe is
// checked too. Only what the contract uses is implemented: a static Source, a static DetailType or
// a "$.body.<path>" one, and an InputTemplate, transformed as Pipes documents it
// (pipe-input-template.ts); anything else (no InputTemplate, enrichment, filters, dynamic Source)
// is refused when the pipe is connected. A message whose input is no JSON object fails PutEvents
// (MalformedDetail) and goes back to the queue, as with the real Pipe.
//
// What it models, from the EventBridge Pipes User Guide: "Amazon EventBridge Pipes input
// transformation" (pipe-input-template.ts); "Amazon SQS as a source in EventBridge Pipes": the
// pipe polls the queue, and a message whose delivery failed is not deleted, so it comes back after
// the queue's visibility timeout and, past maxReceiveCount, goes to the queue's dead-letter queue
// (sqs-fake.ts). The SQS-to-bus hop takes `latencyMs` (polling and the PutEvents).
import { SHORT_WAIT_PIPE } from '../../../functions/adapters/aws/short-wait-queue.ts';
import { PipeTemplateError, renderInputTemplate, sqsPayload } from './pipe-input-template.ts';
import { resolveBusName, resolveValue, resourcesOfType, type CfnRefs, type CfnTemplate } from './cfn-template.ts';
import type { EventBridgeFake, PutResult } from './eventbridge-fake.ts';
import type { QueuedMessage, SqsFake } from './sqs-fake.ts';

export interface PipeTarget {
  busName: string;
  detailType: unknown;
  source: unknown;
  inputTemplate: unknown;
}

export interface PipeDelivery {
  messageId: string;
  result: PutResult;
}

export interface ConnectedPipe {
  readonly deliveries: readonly PipeDelivery[];
}

const BODY_PATH = /^\$\.body((?:\.[A-Za-z0-9_-]+)+)$/;

/** The target the contract in short-wait.ts describes. */
export const contractPipe = (busName: string): PipeTarget => ({
  busName,
  detailType: SHORT_WAIT_PIPE.detailType,
  source: SHORT_WAIT_PIPE.source,
  inputTemplate: SHORT_WAIT_PIPE.inputTemplate,
});

/** The one AWS::Pipes::Pipe of a template (or the one of this logical id), as the fake will run it. */
export function pipeFromTemplate(template: CfnTemplate, refs: CfnRefs = {}, logicalId?: string): PipeTarget & { logicalId: string; sourceLogicalId?: string } {
  const pipes = resourcesOfType(template, 'AWS::Pipes::Pipe').filter(([id]) => logicalId === undefined || id === logicalId);
  const [found, ...others] = pipes;
  if (!found || others.length > 0) throw new Error(`expected one AWS::Pipes::Pipe${logicalId ? ` ${logicalId}` : ''} in the template, found ${pipes.length}`);
  const [id, props] = found;
  const where = `pipe ${id}`;
  if (props.Enrichment !== undefined) throw new Error(`${where}: Enrichment is not implemented by the pipe fake`);
  const sourceParameters = (props.SourceParameters ?? {}) as Record<string, unknown>;
  if (sourceParameters.FilterCriteria !== undefined) throw new Error(`${where}: FilterCriteria is not implemented by the pipe fake`);
  const target = (props.TargetParameters ?? {}) as Record<string, unknown>;
  const bus = (target.EventBridgeEventBusParameters ?? {}) as Record<string, unknown>;
  return {
    logicalId: id,
    sourceLogicalId: resolveValue(props.Source, refs)?.logicalId,
    busName: resolveBusName(props.Target, template, refs, where),
    detailType: bus.DetailType,
    source: bus.Source,
    inputTemplate: target.InputTemplate,
  };
}

const at = (value: unknown, path: string): unknown =>
  path
    .split('.')
    .filter(Boolean)
    .reduce<unknown>((v, key) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[key] : undefined), value);

/** Checks the target against what the fake implements and returns how to turn a message into an entry. */
function compile(target: PipeTarget) {
  const where = `pipe to bus ${target.busName}`;
  if (typeof target.source !== 'string' || target.source.startsWith('$')) {
    throw new Error(`${where}: EventBridgeEventBusParameters.Source must be a static string, got ${JSON.stringify(target.source)}`);
  }
  const detailType = target.detailType;
  if (typeof detailType !== 'string' || (detailType.startsWith('$') && !BODY_PATH.test(detailType))) {
    throw new Error(`${where}: EventBridgeEventBusParameters.DetailType must be static or "$.body.<path>", got ${JSON.stringify(detailType)}`);
  }
  const template = target.inputTemplate;
  if (typeof template !== 'string' || template.trim() === '') {
    throw new Error(`${where}: an InputTemplate is needed (without one the detail would be the whole SQS record), got ${JSON.stringify(template)}`);
  }
  const typePath = BODY_PATH.exec(detailType)?.[1];
  const source = target.source;
  return (message: QueuedMessage) => {
    let body: unknown;
    try {
      body = JSON.parse(message.body);
    } catch {
      throw new Error(`${where}: message ${message.messageId} body is not JSON, so $.body paths do not resolve`);
    }
    const type = typePath === undefined ? detailType : at(body, typePath);
    if (typeof type !== 'string') throw new Error(`${where}: message ${message.messageId} has no string at ${detailType}`);
    let detail: string;
    try {
      detail = renderInputTemplate(template, sqsPayload(message));
    } catch (error) {
      if (error instanceof PipeTemplateError) throw new Error(`${where}: message ${message.messageId}: ${error.message}`, { cause: error });
      throw error;
    }
    return { EventBusName: target.busName, Source: source, DetailType: type, Detail: detail };
  };
}

/** Consumes the queue into the bus; a message whose entry fails stays in the queue to come back. */
export function connectPipe(options: { sqs: SqsFake; queue: string; eventBridge: EventBridgeFake; target: PipeTarget; latencyMs?: number }): ConnectedPipe {
  const toEntry = compile(options.target);
  const deliveries: PipeDelivery[] = [];
  const latency = options.latencyMs ?? 0;
  options.sqs.consume(options.queue, async (message) => {
    if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
    const [result = { ErrorCode: 'MissingResult' }] = options.eventBridge.putEvents([toEntry(message)]);
    deliveries.push({ messageId: message.messageId, result });
    if (result.ErrorCode) throw new Error(`pipe: PutEvents failed for message ${message.messageId}: ${result.ErrorCode}`);
  });
  return { deliveries };
}
