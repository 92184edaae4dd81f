// Routing, generated from the catalogue: one rule on our bus per routing entry of `routes`
// (detail type → function), and one rule per intake pattern of events/intake-routing.ts (AWS
// health signals on the default bus, outside reports on ours). Patterns are exact values only, so
// the test fakes can route by them.
import { Duration } from 'aws-cdk-lib';
import { EventBus, Rule, RuleTargetInput, Schedule, type EventPattern, type IEventBus } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { detailTypes, EVENT_SOURCE, routes, type DetailType, type FunctionName } from '../../events/catalogue.ts';
import { intakePatterns } from '../../events/intake-routing.ts';
import { HYGIENE_ROUND_INPUT, HYGIENE_ROUND_MS } from '../../functions/core/hygiene/index.ts';
import { MAINTENANCE_ROUND_INPUT, MAINTENANCE_ROUND_MS } from '../../functions/core/maintenance/index.ts';
import { LEARNER_CHECK_ROUND_INPUT, LEARNER_CHECK_ROUND_MS } from '../../functions/core/learners/index.ts';
import { pascal, type StackFunctionName } from './function-specs.ts';
import { deadLetterQueue, type DeadLetterQueue } from './queues.ts';

export interface RoutingEntry {
  readonly detailType: DetailType;
  readonly functionName: FunctionName;
}

/** Every (detail type, function) pair of the catalogue's routes, in catalogue order. */
export const routingEntries = (): RoutingEntry[] =>
  detailTypes.flatMap((detailType) => routes[detailType].map((functionName) => ({ detailType, functionName })));

/** The pattern of one routing entry: our source and that detail type, nothing else. */
export const routePattern = (detailType: DetailType): EventPattern => ({ source: [EVENT_SOURCE], detailType: [detailType] });

/** EventBridge's JSON pattern keys, as CDK's EventPattern names them. */
const patternKeys = {
  source: 'source',
  'detail-type': 'detailType',
  detail: 'detail',
  account: 'account',
  region: 'region',
  resources: 'resources',
  id: 'id',
  time: 'time',
  version: 'version',
} as const satisfies Record<string, keyof EventPattern>;

/** A pattern written as EventBridge's JSON (as events/intake-routing.ts keeps them) for CDK. */
export function toEventPattern(json: Record<string, unknown>): EventPattern {
  const pattern: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    if (!(key in patternKeys)) throw new Error(`event pattern key ${key} is not one EventBridge matches on`);
    pattern[patternKeys[key as keyof typeof patternKeys]] = value;
  }
  return pattern;
}

const listed = (values: unknown): string => (Array.isArray(values) ? values.join(',') : '');

/** EventBridge's retries for a target it cannot invoke; past them the event goes to the DLQ. */
const TARGET_RETRY = { retryAttempts: 8, maxEventAge: Duration.hours(1) };

export interface RoutingProps {
  readonly bus: IEventBus;
  readonly functions: Record<StackFunctionName, IFunction>;
  readonly deadLetterQueues: DeadLetterQueue[];
}

export class Routing extends Construct {
  readonly rules: Rule[] = [];
  /** Per function: events EventBridge could not deliver to it. */
  readonly deliveryDlqs = new Map<StackFunctionName, Queue>();

  constructor(scope: Construct, id: string, props: RoutingProps) {
    super(scope, id);
    for (const { detailType, functionName } of routingEntries()) {
      this.route(`${detailType}To${pascal(functionName)}`, props.bus, routePattern(detailType), functionName, props, `${detailType} → ${functionName}`);
    }
    // Once a minute schedule-retry resumes incidents a crash left with nothing owed, running or
    // scheduled: on AWS nothing else would (app/incident/sweep.ts, sweepBlind).
    const sweep = new Rule(this, 'StalledIncidentSweep', {
      schedule: Schedule.rate(Duration.minutes(1)),
      description: 'etcd-remediator: resume stalled incidents → schedule-retry',
    });
    sweep.addTarget(
      new LambdaFunction(props.functions['schedule-retry'], { deadLetterQueue: this.deliveryDlq('schedule-retry', props.deadLetterQueues), ...TARGET_RETRY }),
    );
    this.rules.push(sweep);
    // Every round probe-members asks for one learner check of each registered cluster
    // (LearnerCheckDue, routed back to it above): stuck learners are cleaned up outside incidents too.
    this.round('LearnerCheckRound', LEARNER_CHECK_ROUND_MS, LEARNER_CHECK_ROUND_INPUT, 'the periodic learner check', props);
    // Every minute one leader-hygiene check of each registered cluster (HygieneCheckDue, routed
    // back to it above), run in the rounds each cluster's hygiene.checkEveryMs falls in.
    this.round('HygieneRound', HYGIENE_ROUND_MS, HYGIENE_ROUND_INPUT, 'the periodic leader-hygiene check', props);
    // Every 5 minutes one maintenance look at each registered cluster (MaintenanceDue, routed to
    // remediate), run for a cluster whose policy turns maintenance on, in the rounds its checkEveryMs falls in.
    this.round('MaintenanceRound', MAINTENANCE_ROUND_MS, MAINTENANCE_ROUND_INPUT, 'the periodic maintenance check', props);
    // AWS delivers its own events (EC2, CloudWatch, Health) to the account's default bus.
    const defaultBus = EventBus.fromEventBusName(this, 'DefaultBus', 'default');
    for (const { bus, pattern } of intakePatterns) {
      const what = `${listed(pattern.source)} ${listed(pattern['detail-type'])}`;
      // Named by what it matches, so reordering the list replaces no rule.
      this.route(`Intake ${what}`, bus === 'default' ? defaultBus : props.bus, toEventPattern(pattern), 'intake', props, `${what} (${bus} bus) → intake`);
    }
  }

  private route(id: string, bus: IEventBus, eventPattern: EventPattern, name: StackFunctionName, props: RoutingProps, what: string): void {
    const deadLetterQueue = this.deliveryDlq(name, props.deadLetterQueues);
    const rule = new Rule(this, id, { eventBus: bus, eventPattern, description: `etcd-remediator: ${what}` });
    rule.addTarget(new LambdaFunction(props.functions[name], { deadLetterQueue, ...TARGET_RETRY }));
    this.rules.push(rule);
  }

  /** A schedule rule handing probe-members a round's fixed input every `everyMs` (whole minutes). */
  private round(id: string, everyMs: number, input: { readonly etcdRemediator: string }, what: string, props: RoutingProps): void {
    if (everyMs % 60_000 !== 0) throw new Error(`${id}: a schedule rule's rate is whole minutes, not ${everyMs} ms`);
    const rule = new Rule(this, id, {
      schedule: Schedule.rate(Duration.minutes(everyMs / 60_000)),
      description: `etcd-remediator: a round of ${what} → probe-members`,
    });
    rule.addTarget(
      new LambdaFunction(props.functions['probe-members'], {
        event: RuleTargetInput.fromObject(input),
        deadLetterQueue: this.deliveryDlq('probe-members', props.deadLetterQueues),
        ...TARGET_RETRY,
      }),
    );
    this.rules.push(rule);
  }

  private deliveryDlq(name: StackFunctionName, registry: DeadLetterQueue[]): Queue {
    let queue = this.deliveryDlqs.get(name);
    if (!queue) {
      queue = deadLetterQueue(this, `${pascal(name)}Undelivered`, `${name}: events EventBridge could not deliver`, registry);
      this.deliveryDlqs.set(name, queue);
    }
    return queue;
  }
}
