// What an outside health signal says, read without I/O: which machines it names (by instance id
// or node name), why, and when; or why it says nothing we act on; or why it cannot be read.
import type { z } from 'zod';
import {
  ALARM_STATE_CHANGE,
  alarmStateChangeSchema,
  EC2_STATE_CHANGE,
  ec2StateChangeSchema,
  HEALTH_EVENT,
  healthEventSchema,
  STATUS_CHECK_METRIC_PREFIX,
  UNHEALTHY_EC2_STATES,
  type AlarmStateChange,
  type Ec2StateChange,
  type HealthEvent,
} from './intake-sources.ts';

/** One machine a signal names as unhealthy; the directory maps it to a cluster and member. */
export interface SignalReport {
  by: 'instanceId' | 'nodeName';
  value: string;
  /** In the source's terms, for a person reading the incident. */
  reason: string;
  source: 'ec2' | 'cloudwatch-alarm' | 'aws-health';
  /** ISO-8601. */
  observedAt: string;
}

export type SignalReading =
  | { kind: 'reports'; signal: string; reports: SignalReport[] }
  /** A well-formed signal that says nothing about ill health (an instance starting, an alarm back to OK). */
  | { kind: 'ignored'; signal: string; why: string }
  /** Malformed, or about ill health but naming no machine: kept as a dead letter. */
  | { kind: 'refused'; signal: string; problem: string }
  /** A MemberUnhealthy sent to the intake itself; the app validates it against the catalogue. */
  | { kind: 'direct'; signal: 'MemberUnhealthy'; detail: unknown };

/** Longest reason MemberUnhealthy takes. */
const MAX_REASON = 1_000;
const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;
const INSTANCE_ARN = /^arn:aws[a-z-]*:ec2:[^:]*:[^:]*:instance\/(i-[0-9a-f]{8,17})$/;

const takes = [EC2_STATE_CHANGE, ALARM_STATE_CHANGE, HEALTH_EVENT, 'MemberUnhealthy'].join(', ');

/** Reads any event the intake may be given: an EventBridge event, or a bare MemberUnhealthy detail. */
export function readSignal(raw: unknown): SignalReading {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { kind: 'refused', signal: 'unknown', problem: 'the event is not a JSON object' };
  }
  const event = raw as Record<string, unknown>;
  const detailType = event['detail-type'];
  // Invoked directly (not through EventBridge): the payload is the detail itself.
  if (detailType === undefined) return { kind: 'direct', signal: 'MemberUnhealthy', detail: raw };
  switch (detailType) {
    case 'MemberUnhealthy':
      return { kind: 'direct', signal: 'MemberUnhealthy', detail: event.detail };
    case EC2_STATE_CHANGE:
      return parsed(EC2_STATE_CHANGE, ec2StateChangeSchema, raw, readEc2StateChange);
    case ALARM_STATE_CHANGE:
      return parsed(ALARM_STATE_CHANGE, alarmStateChangeSchema, raw, readAlarmStateChange);
    case HEALTH_EVENT:
      return parsed(HEALTH_EVENT, healthEventSchema, raw, readHealthEvent);
    default:
      return {
        kind: 'refused',
        signal: typeof detailType === 'string' ? detailType : 'unknown',
        problem: `detail-type: ${JSON.stringify(detailType)} is not a health signal the intake takes (it takes ${takes})`,
      };
  }
}

function parsed<S extends z.ZodType>(signal: string, schema: S, raw: unknown, read: (event: z.output<S>) => SignalReading): SignalReading {
  const result = schema.safeParse(raw);
  if (result.success) return read(result.data);
  return { kind: 'refused', signal, problem: `${signal} is invalid: ${describeIssues(result.error.issues)}` };
}

/** One line naming each field and its problem, e.g. `detail.state: is required`. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String).join('.') || '(event)';
      const missing = (issue.code === 'invalid_type' || issue.code === 'invalid_value') && issue.input === undefined;
      return `${path}: ${missing ? 'is required' : issue.message}`;
    })
    .join('; ');
}

export function readEc2StateChange(event: Ec2StateChange): SignalReading {
  const { 'instance-id': instanceId, state } = event.detail;
  if (!(UNHEALTHY_EC2_STATES as readonly string[]).includes(state)) {
    return { kind: 'ignored', signal: EC2_STATE_CHANGE, why: `instance ${instanceId} is ${state}, which is not a sign of ill health` };
  }
  const report: SignalReport = {
    by: 'instanceId',
    value: instanceId,
    reason: `EC2 instance ${instanceId} is ${state}`,
    source: 'ec2',
    observedAt: isoOf(event.time),
  };
  return { kind: 'reports', signal: EC2_STATE_CHANGE, reports: [report] };
}

export function readAlarmStateChange(event: AlarmStateChange): SignalReading {
  const { alarmName, state } = event.detail;
  if (state.value !== 'ALARM') {
    return { kind: 'ignored', signal: ALARM_STATE_CHANGE, why: `alarm ${alarmName} went to ${state.value}, not ALARM` };
  }
  const watched = (event.detail.configuration?.metrics ?? []).flatMap((m) => (m.metricStat ? [m.metricStat.metric] : []));
  const statusChecks = watched.filter((m) => m.name.startsWith(STATUS_CHECK_METRIC_PREFIX) && (m.namespace ?? 'AWS/EC2') === 'AWS/EC2');
  if (statusChecks.length === 0) {
    const names = watched.map((m) => m.name).join(', ') || 'no single metric';
    return { kind: 'ignored', signal: ALARM_STATE_CHANGE, why: `alarm ${alarmName} watches ${names}, not ${STATUS_CHECK_METRIC_PREFIX}` };
  }
  const instances = unique(statusChecks.flatMap((m) => (m.dimensions.InstanceId ? [m.dimensions.InstanceId] : [])));
  if (instances.length === 0) {
    return {
      kind: 'refused',
      signal: ALARM_STATE_CHANGE,
      problem: `alarm ${alarmName} is on ${STATUS_CHECK_METRIC_PREFIX} but names no instance (no InstanceId dimension)`,
    };
  }
  // When the state changed, not when EventBridge carried it; CloudWatch writes "+0000" offsets.
  const observedAt = state.timestamp && !Number.isNaN(Date.parse(state.timestamp)) ? isoOf(state.timestamp) : isoOf(event.time);
  const metric = statusChecks[0]!.name;
  const why = state.reason ? `: ${state.reason}` : '';
  const reports = instances.map((id): SignalReport => ({
    by: 'instanceId',
    value: id,
    reason: clip(`CloudWatch alarm ${alarmName} is in ALARM on ${metric} for instance ${id}${why}`),
    source: 'cloudwatch-alarm',
    observedAt,
  }));
  return { kind: 'reports', signal: ALARM_STATE_CHANGE, reports };
}

export function readHealthEvent(event: HealthEvent): SignalReading {
  const { eventTypeCode, statusCode } = event.detail;
  if (statusCode === 'closed') {
    return { kind: 'ignored', signal: HEALTH_EVENT, why: `AWS Health ${eventTypeCode} is closed: the issue is resolved` };
  }
  const named = [...(event.detail.affectedEntities ?? []).map((e) => e.entityValue), ...event.resources];
  const instances = unique(named.flatMap((value) => instanceIdIn(value) ?? []));
  if (instances.length === 0) {
    return { kind: 'refused', signal: HEALTH_EVENT, problem: `AWS Health ${eventTypeCode} names no EC2 instance (affectedEntities and resources hold none)` };
  }
  const category = event.detail.eventTypeCategory ? ` (${event.detail.eventTypeCategory})` : '';
  const description = event.detail.eventDescription?.[0]?.latestDescription;
  const reports = instances.map((id): SignalReport => ({
    by: 'instanceId',
    value: id,
    reason: clip(`AWS Health ${eventTypeCode}${category} names instance ${id}${description ? `: ${description}` : ''}`),
    source: 'aws-health',
    observedAt: isoOf(event.time),
  }));
  return { kind: 'reports', signal: HEALTH_EVENT, reports };
}

/** An instance id as itself or inside an EC2 instance ARN. */
export function instanceIdIn(value: string): string | undefined {
  if (INSTANCE_ID.test(value)) return value;
  return INSTANCE_ARN.exec(value)?.[1];
}

const isoOf = (time: string): string => new Date(Date.parse(time)).toISOString();
const unique = (values: string[]): string[] => [...new Set(values)];
const clip = (s: string): string => (s.length <= MAX_REASON ? s : `${s.slice(0, MAX_REASON - 1)}…`);
