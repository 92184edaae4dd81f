// A protocol-level fake of EventBridge Scheduler for the real @aws-sdk/client-scheduler, REST-JSON:
// CreateSchedule (POST /schedules/{Name}, GroupName in the body), GetSchedule and DeleteSchedule
// (GET / DELETE /schedules/{Name}?groupName=…). Only one-time at() schedules with an EventBridge
// bus target are implemented. On its clock's time, late by its precision, it puts the target's
// Input on the EventBridge fake as the templated target does, retrying per the RetryPolicy, then
// dead-letters or deletes.
//
// What it models, from the EventBridge Scheduler User Guide:
// - "Schedule types in EventBridge Scheduler": every schedule invokes its target with 60 second
//   precision: at(1:00) invokes between 1:00:00 and 1:00:59 when no flexible time window is set.
//   So any lead is accepted, a few seconds as well as an hour, and the firing comes up to a minute
//   after the time: `firingDelayMs`, within [0, 60 s), 30 s (the window's middle) unless a test
//   says, and compressible (compression.ts).
// - "Configuring flexible time windows in EventBridge Scheduler": with FLEXIBLE the target is
//   invoked within MaximumWindowInMinutes after the time; the same delay, in that wider window.
// - The Scheduler→bus hop itself takes `latencyMs` on top.
// A time already past fires at the next chance (the guide does not say; a schedule is never early).
import { type Clock } from '../../../functions/ports/clock.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import { busNameOf } from './cfn-template.ts';
import { compress } from './compression.ts';
import { dueTimer } from './due-timer.ts';
import type { EventBridgeFake, PutResult } from './eventbridge-fake.ts';
import { AwsFakeError, jsonBody, startFakeServer, type FakeRequest, type FakeResponse } from './http.ts';

/** The fields of a CreateSchedule request this fake reads; the whole body is kept as `request`. */
interface CreateBody {
  GroupName?: string;
  ScheduleExpression?: string;
  ScheduleExpressionTimezone?: string;
  FlexibleTimeWindow?: { Mode?: string; MaximumWindowInMinutes?: number };
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
  /** The at() time. */
  fireAt: number;
  /** When this fake fires it: the at() time, late by the precision window's delay and the hop. */
  firesAt: number;
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
  /**
   * How late after its at() time a schedule fires, given its window (60 s with FlexibleTimeWindow
   * OFF, MaximumWindowInMinutes with FLEXIBLE): a number, or a choice per schedule; kept inside
   * [0, window). Default: half the window.
   */
  firingDelayMs?: number | ((schedule: StoredSchedule, windowMs: number) => number);
  /** Divides the firing delay (compression.ts); the at() time itself is the caller's. */
  compression?: number;
  /** The Scheduler→bus hop, in ms after the firing (default 0). */
  latencyMs?: number;
}

export interface SchedulerFake {
  readonly endpoint: string;
  /** Every request, in order: the operation, the name and the body or query. */
  readonly requests: readonly {
    operation: 'CreateSchedule' | 'GetSchedule' | 'DeleteSchedule';
    name: string;
    groupName: string;
    body: Record<string, unknown>;
  }[];
  readonly firings: readonly Firing[];
  schedules(): StoredSchedule[];
  /** Fires every schedule due on the clock, earliest first; returns how many fired. */
  runDue(): Promise<number>;
  close(): Promise<void>;
}

/** 60 second precision, as "Schedule types in EventBridge Scheduler" states it. */
export const PRECISION_WINDOW_MS = 60_000;
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
  const arm = () => timer.arm(pending().reduce<number | undefined>((min, s) => Math.min(min ?? s.firesAt, s.firesAt), undefined));

  /** The precision window's delay for this schedule, compressed, inside [0, window). */
  function lateBy(schedule: StoredSchedule): number {
    const window =
      schedule.request.FlexibleTimeWindow?.Mode === 'FLEXIBLE'
        ? (schedule.request.FlexibleTimeWindow.MaximumWindowInMinutes ?? 1) * 60_000
        : PRECISION_WINDOW_MS;
    const chosen = options.firingDelayMs;
    const delay = typeof chosen === 'function' ? chosen(schedule, window) : (chosen ?? window / 2);
    return compress(Math.min(Math.max(0, delay), window - 1), options.compression);
  }

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
    const minutes = body.FlexibleTimeWindow?.MaximumWindowInMinutes;
    if (mode === 'FLEXIBLE' && (typeof minutes !== 'number' || !Number.isInteger(minutes) || minutes < 1 || minutes > 1440)) {
      throw invalid('FlexibleTimeWindow.MaximumWindowInMinutes must be an integer from 1 to 1440 when Mode is FLEXIBLE');
    }
    const at = AT.exec(body.ScheduleExpression ?? '');
    if (!at?.[1])
      throw invalid(`the Scheduler fake implements only one-time at(yyyy-mm-ddThh:mm:ss) schedules, not ${JSON.stringify(body.ScheduleExpression)}`);
    if ((body.ScheduleExpressionTimezone ?? 'UTC') !== 'UTC') throw invalid('the Scheduler fake implements only ScheduleExpressionTimezone UTC');
    const target = body.Target;
    if (!target?.Arn || !target.RoleArn) throw invalid('Target.Arn and Target.RoleArn are required');
    if (!/^arn:aws:events:[^:]*:\d{12}:event-bus\/.+$/.test(target.Arn) || !target.EventBridgeParameters) {
      throw invalid('the Scheduler fake implements only EventBridge bus targets (an event-bus ARN with EventBridgeParameters)');
    }
    const { DetailType, Source } = target.EventBridgeParameters;
    if (!DetailType || !Source) throw invalid('EventBridgeParameters.DetailType and Source are required');
    return Date.parse(`${at[1]}Z`);
  }

  function create(name: string, body: Record<string, unknown> & CreateBody): FakeResponse {
    const groupName = body.GroupName ?? 'default';
    if (!groups.has(groupName)) throw new AwsFakeError(404, 'ResourceNotFoundException', `Schedule group ${groupName} does not exist.`);
    const fireAt = validate(name, body);
    if (schedules.has(key(groupName, name))) throw new AwsFakeError(409, 'ConflictException', `Schedule ${name} already exists.`);
    const arn = `arn:aws:scheduler:${eventBridge.region}:${eventBridge.account}:schedule/${groupName}/${name}`;
    const schedule: StoredSchedule = { name, groupName, arn, fireAt, firesAt: fireAt, createdAt: clock.now(), spent: false, request: body };
    schedule.firesAt = fireAt + lateBy(schedule) + (options.latencyMs ?? 0);
    schedules.set(key(groupName, name), schedule);
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
      if (request.headers['content-type'] !== 'application/json')
        throw invalid(`Scheduler speaks REST-JSON, got content-type ${String(request.headers['content-type'])}`);
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
    const due = pending()
      .filter((s) => s.firesAt <= now)
      .sort((a, b) => a.firesAt - b.firesAt);
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
