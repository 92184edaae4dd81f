// The outside health signals the intake takes, as AWS delivers them on EventBridge. Loose objects:
// AWS adds fields over time, and a field we do not read must not refuse the event.
import { z } from 'zod';

export const EC2_STATE_CHANGE = 'EC2 Instance State-change Notification';
export const ALARM_STATE_CHANGE = 'CloudWatch Alarm State Change';
export const HEALTH_EVENT = 'AWS Health Event';

/** EC2 states after which the machine no longer serves its etcd member. */
export const UNHEALTHY_EC2_STATES = ['stopping', 'stopped', 'shutting-down', 'terminated'] as const;

/** Every StatusCheckFailed metric of AWS/EC2: _Instance, _System, _AttachedEBS and the total. */
export const STATUS_CHECK_METRIC_PREFIX = 'StatusCheckFailed';

/** The same by exact name, for rule patterns (the intake itself reads any by the prefix). */
export const STATUS_CHECK_METRICS = ['StatusCheckFailed', 'StatusCheckFailed_Instance', 'StatusCheckFailed_System', 'StatusCheckFailed_AttachedEBS'] as const;

const text = z.string().trim().min(1, 'must not be empty');
const time = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be a date and time, e.g. 2025-06-01T12:00:00Z');

const envelope = <S extends string, D extends string, T extends z.ZodType>(source: S, detailType: D, detail: T) =>
  z.looseObject({
    source: z.literal(source),
    'detail-type': z.literal(detailType),
    time,
    resources: z.array(z.string()).default([]),
    detail,
  });

export const ec2StateChangeSchema = envelope('aws.ec2', EC2_STATE_CHANGE, z.looseObject({ 'instance-id': text, state: text }));

const alarmState = z.looseObject({ value: text, reason: z.string().optional(), timestamp: z.string().optional() });

/** One entry of an alarm's metrics: a metric (metricStat) or a math expression over others. */
const alarmMetric = z.looseObject({
  id: z.string().optional(),
  metricStat: z
    .looseObject({
      metric: z.looseObject({
        namespace: z.string().optional(),
        name: text,
        dimensions: z.record(z.string(), z.string()).default({}),
      }),
    })
    .optional(),
});

export const alarmStateChangeSchema = envelope(
  'aws.cloudwatch',
  ALARM_STATE_CHANGE,
  z.looseObject({
    alarmName: text,
    state: alarmState,
    previousState: alarmState.optional(),
    // A composite alarm has a rule instead of metrics.
    configuration: z.looseObject({ metrics: z.array(alarmMetric).default([]) }).optional(),
  }),
);

export const healthEventSchema = envelope(
  'aws.health',
  HEALTH_EVENT,
  z.looseObject({
    eventArn: z.string().optional(),
    service: z.string().optional(),
    eventTypeCode: text,
    eventTypeCategory: z.string().optional(),
    statusCode: z.string().optional(),
    eventDescription: z.array(z.looseObject({ latestDescription: z.string() })).optional(),
    affectedEntities: z.array(z.looseObject({ entityValue: z.string() })).optional(),
  }),
);

export type Ec2StateChange = z.output<typeof ec2StateChangeSchema>;
export type AlarmStateChange = z.output<typeof alarmStateChangeSchema>;
export type HealthEvent = z.output<typeof healthEventSchema>;
