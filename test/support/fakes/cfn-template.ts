// Reading a synthesized CloudFormation template the way the deployed stack would resolve it, as
// far as the fakes need: names of event buses, and Ref / Fn::GetAtt to resources by logical id.
// What a template cannot say by itself (a generated name) the test passes in `refs`.

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

export interface CfnTemplate {
  Resources?: Record<string, CfnResource>;
}

/** Logical id (or `LogicalId.Attribute`) → the value it stands for. */
export type CfnRefs = Record<string, string>;

export interface Resolved {
  /** The value as a string, when the template or refs say it. */
  literal?: string;
  /** The resource it refers to, for Ref and Fn::GetAtt. */
  logicalId?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function resolveValue(value: unknown, refs: CfnRefs = {}): Resolved | undefined {
  if (typeof value === 'string') return { literal: value };
  if (!isObject(value)) return undefined;
  const ref = value.Ref;
  if (typeof ref === 'string') return { logicalId: ref, literal: refs[ref] };
  const getAtt = value['Fn::GetAtt'];
  const [id, attribute] = Array.isArray(getAtt) ? getAtt : typeof getAtt === 'string' ? getAtt.split('.') : [];
  if (typeof id === 'string' && typeof attribute === 'string') return { logicalId: id, literal: refs[`${id}.${attribute}`] ?? refs[id] };
  return undefined;
}

/** `arn:aws:events:region:account:event-bus/NAME` → NAME; a plain name stays as it is. */
export const busNameOf = (nameOrArn: string): string =>
  nameOrArn.startsWith('arn:') ? nameOrArn.slice(nameOrArn.indexOf('event-bus/') + 'event-bus/'.length) : nameOrArn;

export const resourcesOfType = (template: CfnTemplate, type: string): [string, Record<string, unknown>][] =>
  Object.entries(template.Resources ?? {})
    .filter(([, resource]) => resource.Type === type)
    .map(([id, resource]) => [id, resource.Properties ?? {}]);

/** Every event bus the template names, with the name CloudFormation gives it. */
export const busNamesOf = (template: CfnTemplate): string[] =>
  resourcesOfType(template, 'AWS::Events::EventBus').flatMap(([, props]) => (typeof props.Name === 'string' ? [props.Name] : []));

/** A bus named by a rule or a pipe: a name, an ARN, or a Ref / GetAtt to an AWS::Events::EventBus. */
export function resolveBusName(value: unknown, template: CfnTemplate, refs: CfnRefs, where: string): string {
  if (value === undefined) return 'default';
  const resolved = resolveValue(value, refs);
  if (resolved?.literal !== undefined) return busNameOf(resolved.literal);
  const bus = resolved?.logicalId ? template.Resources?.[resolved.logicalId] : undefined;
  if (bus?.Type === 'AWS::Events::EventBus' && typeof bus.Properties?.Name === 'string') return bus.Properties.Name;
  throw new Error(`${where}: cannot resolve the event bus ${JSON.stringify(value)}; pass refs: { "<logicalId>": "<bus name>" }`);
}

/** What an AWS::SQS::Queue of the template says about redelivery, as SQS reads it. */
export interface QueueAttributes {
  /** VisibilityTimeout, in seconds, when the template sets it. */
  visibilityTimeoutSeconds?: number;
  /** RedrivePolicy: the dead-letter queue's logical id and the receives before a message goes there. */
  redrive?: { deadLetterQueue: string; maxReceiveCount: number };
}

export function queueAttributesOf(template: CfnTemplate, logicalId: string): QueueAttributes | undefined {
  const queue = template.Resources?.[logicalId];
  if (queue?.Type !== 'AWS::SQS::Queue') return undefined;
  const props = queue.Properties ?? {};
  const attributes: QueueAttributes = {};
  if (typeof props.VisibilityTimeout === 'number') attributes.visibilityTimeoutSeconds = props.VisibilityTimeout;
  const policy = isObject(props.RedrivePolicy) ? props.RedrivePolicy : undefined;
  if (policy) {
    const deadLetterQueue = resolveValue(policy.deadLetterTargetArn)?.logicalId;
    const maxReceiveCount = Number(policy.maxReceiveCount);
    if (!deadLetterQueue || !Number.isInteger(maxReceiveCount) || maxReceiveCount < 1) {
      throw new Error(
        `queue ${logicalId}: RedrivePolicy ${JSON.stringify(policy)} needs a deadLetterTargetArn naming a queue of the template and a maxReceiveCount from 1`,
      );
    }
    attributes.redrive = { deadLetterQueue, maxReceiveCount };
  }
  return attributes;
}
