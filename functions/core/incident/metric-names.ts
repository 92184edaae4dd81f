// THE table of metric names, for both sides: the Powertools (CloudWatch EMF) metrics the functions
// write on AWS and the Prometheus series `run` and `watch` serve on /metrics. Each row is one
// metric: its CloudWatch name and unit, what one point of it stands for, the dimensions CloudWatch
// keeps and the labels Prometheus keeps. Both sides count the same points (outcome-metrics.ts).
//
// The Prometheus name is the CloudWatch name in snake_case under `etcd_remediator_`, with the unit
// as Prometheus names it: Milliseconds become seconds (`_seconds`, the value divided by 1000, a
// histogram), a Count is a counter (`_total`). TimeToRemediate is
// etcd_remediator_time_to_remediate_seconds, RemediationBlocked etcd_remediator_remediation_blocked_total.
//
// Labels: CloudWatch bills each combination of dimension values as a metric of its own, so a row
// keeps few dimensions there and the finer labels (a member, a reason) ride as EMF metadata; a
// point without all of a row's labels is CloudWatch's total over them (CloudWatch cannot sum
// dimensions itself), which Prometheus does not keep, since it sums its labelled series.
import { incidentEndings } from './incident-endings.ts';

export type MetricUnitName = 'Count' | 'Milliseconds';

export interface MetricRow {
  /** The Powertools name, and the Prometheus one's stem. */
  name: string;
  unit: MetricUnitName;
  /** What one point counts, or what its value measures. */
  meaning: string;
  /** The dimensions a CloudWatch point carries (beside `service`); a point's other labels go as metadata. */
  dimensions: readonly string[];
  /** The Prometheus labels; CloudWatch's dimensions are among them. */
  labels: readonly string[];
  /** Histogram bucket bounds, in seconds, for a Milliseconds row. */
  bucketsSeconds?: readonly number[];
  /** Served by /metrics only: read from the state store at each scrape, never written as EMF. */
  localOnly?: true;
}

export const TIME_TO_REMEDIATE = 'TimeToRemediate';
/** From the removal to the check that found the cluster whole again. */
export const TIME_TO_REPLACEMENT = 'TimeToReplacement';
/** A replacement that did not come within its window: CloudWatch alarms on it (infra/cdk/alarms.ts). */
export const REPLACEMENT_OVERDUE = 'ReplacementOverdue';
export const LEARNER_REMOVED = 'LearnerRemoved';
export const RETRY_REQUESTED = 'RetryRequested';
export const LEADER_MOVED = 'LeaderMoved';
export const REMEDIATION_DEFERRED = 'RemediationDeferred';
export const PROBE_LATENCY = 'ProbeLatency';
export const DEAD_LETTER = 'DeadLetter';
export const INCIDENTS = 'Incidents';
export const HYGIENE_MOVES = 'HygieneMoves';
export const HYGIENE_MOVE_DURATION = 'HygieneMoveDuration';
export const HYGIENE_ALERTS = 'HygieneAlerts';
export const HYGIENE_ALERTS_ENDED = 'HygieneAlertsEnded';
export const MAINTENANCE_RUNS = 'MaintenanceRuns';
export const MAINTENANCE_STEP_DURATION = 'MaintenanceStepDuration';

/** The reasons a retry stands for fleet safety holding a remediation back (fleet-gate.ts). */
export const DEFERRAL_REASONS = ['FLEET_STORM', 'PAUSED', 'REMOVALS_IN_FLIGHT'] as const;

const endingRows: MetricRow[] = Object.values(incidentEndings).map((ending) => ({
  name: ending.metric,
  unit: 'Count',
  meaning: `An incident ended ${ending.outcome} (${ending.detailType}): ${ending.meaning}`,
  dimensions: ending.metricByReason ? ['reason'] : [],
  labels: ending.metricByReason ? ['reason'] : [],
}));

export const metricTable: readonly MetricRow[] = [
  ...endingRows,
  {
    name: TIME_TO_REMEDIATE,
    unit: 'Milliseconds',
    meaning: 'From the incident opening to its member removed and a new leader standing (RemediationCompleted).',
    dimensions: [],
    labels: [],
    bucketsSeconds: [1, 5, 10, 30, 60, 120, 300, 600, 1_800, 3_600],
  },
  {
    name: TIME_TO_REPLACEMENT,
    unit: 'Milliseconds',
    meaning: 'From the removal to the check that found the cluster whole again (RemediationReplaced).',
    dimensions: [],
    labels: [],
    bucketsSeconds: [60, 300, 600, 1_800, 3_600, 7_200, 21_600, 86_400],
  },
  {
    name: REPLACEMENT_OVERDUE,
    unit: 'Count',
    meaning: 'A replacement did not join within its window (ReplacementOverdue): alarmed on AWS.',
    dimensions: [],
    labels: [],
  },
  {
    name: LEARNER_REMOVED,
    unit: 'Count',
    meaning: 'A learner stuck past stuckLearnerAfterMs was removed (LearnerRemoved), in an incident or by the periodic learner check.',
    dimensions: [],
    labels: [],
  },
  { name: LEADER_MOVED, unit: 'Count', meaning: 'Leadership was moved off the target before its removal (LeaderMoved).', dimensions: [], labels: [] },
  {
    name: RETRY_REQUESTED,
    unit: 'Count',
    meaning: 'A step could not finish now and asked for another probe (RetryRequested), by its reason code.',
    dimensions: [],
    labels: ['reason'],
  },
  {
    name: REMEDIATION_DEFERRED,
    unit: 'Count',
    meaning: `Fleet safety held a remediation back (a RetryRequested for ${DEFERRAL_REASONS.join(', ')}), by that reason.`,
    dimensions: ['reason'],
    labels: ['reason'],
  },
  {
    name: PROBE_LATENCY,
    unit: 'Milliseconds',
    meaning: "One member's status call over one path in an incident's probe (each member and path of a MembersProbed view), answered or not.",
    dimensions: ['path'],
    labels: ['cluster', 'member', 'path', 'reachability'],
    bucketsSeconds: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  },
  {
    name: HYGIENE_MOVES,
    unit: 'Count',
    meaning:
      'A leader-hygiene move ended (HygieneMoveEnded), by its outcome: moved, failed, expired, superseded, would-move. A redelivery that says the end again is not counted.',
    dimensions: ['outcome'],
    labels: ['outcome'],
  },
  {
    name: HYGIENE_MOVE_DURATION,
    unit: 'Milliseconds',
    meaning: 'How long MoveLeader took in a leader-hygiene move that moved (HygieneMoveEnded moved, its tookMs).',
    dimensions: [],
    labels: [],
    bucketsSeconds: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  },
  {
    name: HYGIENE_ALERTS,
    unit: 'Count',
    meaning: 'Leader hygiene said a degradation no move may cure (LeaderHygieneAlert), once when it starts, by its reason code.',
    dimensions: [],
    labels: ['reason'],
  },
  {
    name: HYGIENE_ALERTS_ENDED,
    unit: 'Count',
    meaning: "A leader-hygiene alert's hold ended (LeaderHygieneAlert phase ended), once, by the hold's reason code.",
    dimensions: [],
    labels: ['reason'],
  },
  {
    name: MAINTENANCE_RUNS,
    unit: 'Count',
    meaning: 'A maintenance run ended (MaintenanceEnded), by its outcome (done, waiting, blocked, failed) and the reason it ended with.',
    dimensions: ['outcome'],
    labels: ['outcome', 'reason'],
  },
  {
    name: MAINTENANCE_STEP_DURATION,
    unit: 'Milliseconds',
    meaning:
      "How long each step of an ended maintenance run took (its MaintenanceEnded evidence), by its kind (compact, defragment, move-leader, disarm, verify) and outcome: a defragmentation's is how long its member stalled.",
    dimensions: ['step'],
    labels: ['step', 'outcome'],
    bucketsSeconds: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 720],
  },
  {
    name: DEAD_LETTER,
    unit: 'Count',
    meaning: 'An input or event was kept as a dead letter, by where it was refused (its source: http, stdin, timer, local bus, a handler).',
    dimensions: ['source'],
    labels: ['source'],
  },
  {
    name: INCIDENTS,
    unit: 'Count',
    meaning:
      'Incidents open or awaiting their replacement now, by state and the reason of their last decision ("" before the first), read from the state file at each scrape.',
    dimensions: [],
    labels: ['state', 'reason'],
    localOnly: true,
  },
];

export const metricRow = (name: string): MetricRow | undefined => metricTable.find((row) => row.name === name);

const snake = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** The Prometheus name of a row: snake_case under etcd_remediator_, `_seconds` or `_total` by its unit; a gauge has no suffix. */
export function prometheusName(row: MetricRow): string {
  const stem = `etcd_remediator_${snake(row.name)}`;
  if (row.unit === 'Milliseconds') return `${stem}_seconds`;
  return row.localOnly ? stem : `${stem}_total`;
}
/** The CloudWatch namespace of every metric here: the functions write it, the stack's dashboard and alarms read it. */
export const METRICS_NAMESPACE = 'EtcdRemediator';
