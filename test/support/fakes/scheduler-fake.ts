// A protocol-level fake of EventBridge Scheduler for the real @aws-sdk/client-scheduler, REST-JSON:
// CreateSchedule (POST /schedules/{Name}, GroupName in the body), GetSchedule and DeleteSchedule
// (GET / DELETE /schedules/{Name}?groupName=…). Only one-time at() schedules with an EventBridge
// bus target are implemented. It refuses a schedule less than 60 s out: the real service would
// fire it up to a minute late. On its clock's time it puts the target's Input on the EventBridge
// fake as the templated target does, retrying per the RetryPolicy, then dead-letters or deletes.
import { type Clock } from '../../../functions/ports/clock.ts';
import { systemClock } from '../../../functions/adapters/local/system-clock.ts';
import { busNameOf } from './cfn-template.ts';
import { dueTimer } from './due-timer.ts';
import type { EventBridgeFake, PutResult } from './eventbridge-fake.ts';
import { AwsFakeError, jsonBody, startFakeServer, type FakeRequest, type FakeResponse } from './http.ts';

/** The fields of a CreateSchedule request this fake reads; the whole body is kept as `request`. */
interface CreateBody {
  GroupName?: string;
  ScheduleExpression?: string;
  ScheduleExpressionTimezone?: string;
  FlexibleTimeWindow?: { Mode?: string };
  ActionAfterCompletion?: string;
  State?: string;
  Target?: {
    Arn?: string;
    RoleArn?: string;
    Input?: string;
    EventBridgeParameters?: { DetailType?: string; Source?: string };
    RetryPolicy?: { MaximumRetryAttempts?: number; MaximumEventAgeInSeconds?: number };
    DeadLetterConfig?: { Arn?: string };
  };
}

export interface StoredSchedule {
  name: string;
  groupName: string;
  arn: string;
  fireAt: number;
  createdAt: number;
  /** Fired already and kept (ActionAfterCompletion NONE). */
  spent: boolean;
  /** The CreateSchedule body as the SDK sent it. */
  request: Record<string, unknown> & CreateBody;
}

export interface Firing {
  schedule: StoredSchedule;
  /** Each PutEvents try, in order. */
  tries: PutResult[];
  /** Set when every try failed and the event went to the target's DLQ. */
  deadLetterArn?: string;
}

export interface SchedulerFakeOptions {
  eventBridge: EventBridgeFake;
  clock?: Clock;
  /** Schedule groups that exist (default: `default`). */
  groups?: string[];
  /** Fire on a timer when due on the clock, rather than only on runDue(). */
  autoRun?: boolean;
}

export interface SchedulerFake {
  readonly endpoint: string;
  /** Every request, in order: the operation, the name and the body or query. */
  readonly requests: readonly { operation: 'CreateSchedule' | 'GetSchedule' | 'DeleteSchedule'; name: string; groupName: string; body: Record<string, unknown> }[];
  readonly firings: readonly Firing[];
  schedules(): StoredSchedule[];
  /** Fires every schedule due on the clock, earliest first; returns how many fired. */
  runDue(): Promise<number>;
  close(): Promise<void>;
}

const MIN_LEAD_MS = 60_000;
const NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;
const AT = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/;

const invalid = (message: string) => new AwsFakeError(400, 'ValidationException', message);

export async function startSchedulerFake(options: SchedulerFakeOptions): Promise<SchedulerFake> {
  const { eventBridge } = options;
  const clock = options.clock ?? systemClock;
  const groups = new Set(options.groups ?? ['default']);
  const schedules = new Map<string, StoredSchedule>();
  const requests: SchedulerFake['requests'][number][] = [];
  const firings: Firing[] = [];
  const timer = dueTimer(clock, options.autoRun ?? false, () => void runDue());
  const key = (group: string, name: string) => `${group}/${name}`;
  const pending = () => [...schedules.values()].filter((s) => !s.spent && s.request.State !== 'DISABLED');
  const arm = () => timer.arm(pending().reduce<number | undefined>((min, s) => Math.min(min ?? s.fireAt, s.fireAt), undefined));

  function find(group: string, name: string): StoredSchedule {
    if (!groups.has(group)) throw new AwsFakeError(404, 'ResourceNotFoundException', `Schedule group ${group} does not exist.`);
    const schedule = schedules.get(key(group, name));
    if (!schedule) throw new AwsFakeError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
    return schedule;
  }

  function validate(name: string, body: CreateBody): number {
    if (!NAME.test(name)) throw invalid(`Name ${JSON.stringify(name)} must match [0-9a-zA-Z-_.]{1,64}`);
    const mode = body.FlexibleTimeWindow?.Mode;
    if (mode !== 'OFF' && mode !== 'FLEXIBLE') throw invalid('FlexibleTimeWindow.Mode must be OFF or FLEXIBLE');
    const at = AT.exec(body.ScheduleExpression ?? '');
    if (!at?.[1]) throw invalid(`the Scheduler fake implements only one-time at(yyyy-mm-ddThh:mm:ss) schedules, not ${JSON.stringify(body.ScheduleExpression)}`);
    if ((body.ScheduleExpressionTimezone ?? 'UTC') !== 'UTC') throw invalid('the Scheduler fake implements only ScheduleExpressionTimezone UTC');
    const target = body.Target;
    if (!target?.Arn || !target.RoleArn) throw invalid('Target.Arn and Target.RoleArn are required');
    if (!/^arn:aws:events:[^:]*:\d{12}:event-bus\/.+$/.test(target.Arn) || !target.EventBridgeParameters) {
      throw invalid('the Scheduler fake implements only EventBridge bus targets (an event-bus ARN with EventBridgeParameters)');
    }
    const { DetailType, Source } = target.EventBridgeParameters;
    if (!DetailType || !Source) throw invalid('EventBridgeParameters.DetailType and Source are required');
    const fireAt = Date.parse(`${at[1]}Z`);
    const lead = fireAt - clock.now();
    if (lead < MIN_LEAD_MS) {
      throw invalid(`${body.ScheduleExpression} is ${lead} ms from now; under 60 s Scheduler fires up to a minute late, use the short-wait path`);
    }
    return fireAt;
  }

  function create(name: string, body: Record<string, unknown> & CreateBody): FakeResponse {
    const groupName = body.GroupName ?? 'default';
    if (!groups.has(groupName)) throw new AwsFakeError(404, 'ResourceNotFoundException', `Schedule group ${groupName} does not exist.`);
    const fireAt = validate(name, body);
    if (schedules.has(key(groupName, name))) throw new AwsFakeError(409, 'ConflictException', `Schedule ${name} already exists.`);
    const arn = `arn:aws:scheduler:${eventBridge.region}:${eventBridge.account}:schedule/${groupName}/${name}`;
    schedules.set(key(groupName, name), { name, groupName, arn, fireAt, createdAt: clock.now(), spent: false, request: body });
    arm();
    return { status: 200, body: { ScheduleArn: arn } };
  }

  function describe(s: StoredSchedule): Record<string, unknown> {
    const { GroupName: _group, ClientToken: _token, ...rest } = s.request;
    return { ...rest, Arn: s.arn, Name: s.name, GroupName: s.groupName, State: s.request.State ?? 'ENABLED', CreationDate: s.createdAt / 1000 };
  }

  function handle(request: FakeRequest): FakeResponse {
    const match = /^\/schedules\/([^/]+)$/.exec(request.path);
    if (!match?.[1]) throw new AwsFakeError(404, 'UnknownOperationException', `the Scheduler fake does not implement ${request.method} ${request.path}`);
    const name = decodeURIComponent(match[1]);
    const groupName = request.query.get('groupName') ?? 'default';
    if (request.method === 'POST') {
      if (request.headers['content-type'] !== 'application/json') throw invalid(`Scheduler speaks REST-JSON, got content-type ${String(request.headers['content-type'])}`);
      const body = jsonBody(request) as Record<string, unknown> & CreateBody;
      requests.push({ operation: 'CreateSchedule', name, groupName: body.GroupName ?? 'default', body });
      return create(name, body);
    }
    const query = Object.fromEntries(request.query);
    if (request.method === 'GET') {
      requests.push({ operation: 'GetSchedule', name, groupName, body: query });
      return { status: 200, body: describe(find(groupName, name)) };
    }
    if (request.method === 'DELETE') {
      requests.push({ operation: 'DeleteSchedule', name, groupName, body: query });
      find(groupName, name);
      schedules.delete(key(groupName, name));
      arm();
      return { status: 200, body: {} };
    }
    throw new AwsFakeError(404, 'UnknownOperationException', `the Scheduler fake does not implement ${request.method} ${request.path}`);
  }

  function fire(schedule: StoredSchedule): Firing {
    const target = schedule.request.Target ?? {};
    const entry = {
      EventBusName: busNameOf(target.Arn ?? ''),
      Source: target.EventBridgeParameters?.Source,
      DetailType: target.EventBridgeParameters?.DetailType,
      Detail: target.Input ?? '{}',
    };
    const firing: Firing = { schedule, tries: [] };
    const attempts = 1 + (target.RetryPolicy?.MaximumRetryAttempts ?? 185);
    for (let i = 0; i < attempts; i++) {
      let result: PutResult;
      try {
        [result = { ErrorCode: 'MissingResult' }] = eventBridge.putEvents([entry]);
      } catch (error) {
        result = { ErrorCode: error instanceof AwsFakeError ? error.code : 'InternalFailure', ErrorMessage: String(error) };
      }
      firing.tries.push(result);
      if (!result.ErrorCode) return firing;
    }
    firing.deadLetterArn = target.DeadLetterConfig?.Arn;
    return firing;
  }

  async function runDue(): Promise<number> {
    const now = clock.now();
    const due = pending().filter((s) => s.fireAt <= now).sort((a, b) => a.fireAt - b.fireAt);
    for (const schedule of due) {
      firings.push(fire(schedule));
      // A one-time schedule fires once: DELETE removes it, NONE keeps it, spent.
      if (schedule.request.ActionAfterCompletion === 'DELETE') schedules.delete(key(schedule.groupName, schedule.name));
      else schedule.spent = true;
    }
    arm();
    return due.length;
  }

  const server = await startFakeServer(handle, (error) => ({
    status: error.status,
    headers: { 'content-type': 'application/json', 'x-amzn-errortype': error.code },
    body: { Message: error.message },
  }));

  return {
    endpoint: server.endpoint,
    requests,
    firings,
    schedules: () => [...schedules.values()],
    runDue,
    close: async () => {
      timer.stop();
      await server.close();
    },
  };
}
