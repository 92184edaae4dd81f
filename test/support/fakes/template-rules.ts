// AWS::Events::Rule resources of a synthesized template, as the EventBridge fake routes by them:
// the bus, the compiled pattern and the targets. Anything the fake cannot honour as EventBridge
// would (an input transformation, an unresolvable bus or target) is refused when loading.
import { compilePattern, type EventMatcher } from './event-pattern.ts';
import { resolveBusName, resolveValue, resourcesOfType, type CfnRefs, type CfnTemplate } from './cfn-template.ts';

export interface RuleTarget {
  /** The target's Id within its rule. */
  id: string;
  /** Its ARN, when the template or refs say it. */
  arn?: string;
  /** The resource its Arn refers to (Ref / Fn::GetAtt). */
  logicalId?: string;
  /** The target's RetryPolicy, when it has one. */
  retryPolicy?: { maximumRetryAttempts?: number; maximumEventAgeInSeconds?: number };
  /** Where its DeadLetterConfig sends an event it could not deliver: an ARN or a logical id. */
  deadLetter?: string;
}

export interface LoadedRule {
  logicalId: string;
  busName: string;
  pattern: unknown;
  matches: EventMatcher;
  targets: RuleTarget[];
}

const TRANSFORMS = ['Input', 'InputPath', 'InputTransformer'] as const;

function loadTarget(raw: unknown, rule: string, refs: CfnRefs): RuleTarget {
  const target = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const id = typeof target.Id === 'string' ? target.Id : '?';
  const where = `rule ${rule}, target ${id}`;
  for (const key of TRANSFORMS) {
    if (target[key] !== undefined) throw new Error(`${where}: ${key} is not implemented by the EventBridge fake (targets get the event as it is)`);
  }
  const resolved = resolveValue(target.Arn, refs);
  if (!resolved || (resolved.literal === undefined && resolved.logicalId === undefined)) {
    throw new Error(`${where}: cannot resolve its Arn ${JSON.stringify(target.Arn)}`);
  }
  type RetryPolicy = { MaximumRetryAttempts?: unknown; MaximumEventAgeInSeconds?: unknown };
  const retry = typeof target.RetryPolicy === 'object' && target.RetryPolicy !== null ? (target.RetryPolicy as RetryPolicy) : undefined;
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  const deadLetter = resolveValue((target.DeadLetterConfig as { Arn?: unknown } | undefined)?.Arn, refs);
  return {
    id,
    arn: resolved.literal,
    logicalId: resolved.logicalId,
    ...(retry
      ? { retryPolicy: { maximumRetryAttempts: number(retry.MaximumRetryAttempts), maximumEventAgeInSeconds: number(retry.MaximumEventAgeInSeconds) } }
      : {}),
    ...(deadLetter ? { deadLetter: deadLetter.literal ?? deadLetter.logicalId } : {}),
  };
}

/** The enabled event-pattern rules of a template; schedule-only and disabled rules route nothing. */
export function rulesFromTemplate(template: CfnTemplate, refs: CfnRefs = {}): LoadedRule[] {
  return resourcesOfType(template, 'AWS::Events::Rule').flatMap(([logicalId, props]) => {
    if (props.EventPattern === undefined || props.State === 'DISABLED') return [];
    const where = `rule ${logicalId}`;
    const targets = Array.isArray(props.Targets) ? props.Targets : [];
    return [
      {
        logicalId,
        busName: resolveBusName(props.EventBusName, template, refs, where),
        pattern: props.EventPattern,
        matches: compilePattern(props.EventPattern, where),
        targets: targets.map((t) => loadTarget(t, logicalId, refs)),
      },
    ];
  });
}
