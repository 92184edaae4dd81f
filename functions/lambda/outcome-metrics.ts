// Which metrics an event we publish stands for, named by the metric table (core/incident/metric-names.ts).
// Counted where an outcome is published (after the step committed it), so a step that fails before
// its commit counts nothing. AWS writes them as EMF, `run` and `watch` serve them on /metrics.
import { isTerminalEvent, type EventEnvelope } from '../../events/catalogue.ts';
import {
  endingOfEvent,
  DEAD_LETTER,
  DEFERRAL_REASONS,
  HYGIENE_ALERTS,
  HYGIENE_ALERTS_ENDED,
  HYGIENE_MOVE_DURATION,
  HYGIENE_MOVES,
  LEADER_MOVED,
  LEARNER_REMOVED,
  MAINTENANCE_RUNS,
  MAINTENANCE_STEP_DURATION,
  PROBE_LATENCY,
  REMEDIATION_DEFERRED,
  REPLACEMENT_OVERDUE,
  RETRY_REQUESTED,
  TIME_TO_REMEDIATE,
  TIME_TO_REPLACEMENT,
  type MetricUnitName,
} from '../core/incident/index.ts';
import type { DeadLetterInput } from '../ports/incident-store.ts';

export { LEARNER_REMOVED, REPLACEMENT_OVERDUE, TIME_TO_REMEDIATE, TIME_TO_REPLACEMENT } from '../core/incident/index.ts';

export interface MetricPoint {
  name: string;
  unit: MetricUnitName;
  value: number;
  /** The point's labels: CloudWatch keeps its row's dimensions of them, Prometheus all. */
  dimensions?: Record<string, string>;
}

const count = (name: string, dimensions?: Record<string, string>): MetricPoint => ({ name, unit: 'Count', value: 1, ...(dimensions ? { dimensions } : {}) });

const isDeferral = (reason: string): boolean => (DEFERRAL_REASONS as readonly string[]).includes(reason);

/** Each member's status call over each path, as the probe the event carries timed it. */
function probeLatencies(event: EventEnvelope<'MembersProbed'>): MetricPoint[] {
  const cluster = event.detail.clusterId;
  return event.detail.view.members.flatMap((member) =>
    member.paths.map((p) => ({
      name: PROBE_LATENCY,
      unit: 'Milliseconds' as const,
      value: p.latencyMs,
      dimensions: { cluster, member: member.name || member.id, path: p.path, reachability: p.reachability },
    })),
  );
}

/** Each journaled step's time, by its kind (the key's part before a member id) and outcome; what is not a step is skipped. */
function stepDurations(steps: unknown): MetricPoint[] {
  if (!Array.isArray(steps)) return [];
  return steps.flatMap((s: unknown) => {
    const { key, tookMs, outcome } = (typeof s === 'object' && s !== null ? s : {}) as Record<string, unknown>;
    if (typeof key !== 'string' || typeof tookMs !== 'number' || typeof outcome !== 'string') return [];
    return [{ name: MAINTENANCE_STEP_DURATION, unit: 'Milliseconds' as const, value: tookMs, dimensions: { step: key.split(':')[0]!, outcome } }];
  });
}

/** `openedAt` (epoch ms) is the incident's, needed for the time to remediate only. */
export function outcomeMetrics(event: EventEnvelope, openedAt?: number): MetricPoint[] {
  if (isTerminalEvent(event)) {
    // The endings table names each ending's metric; blocks and closes are counted once more by
    // reason, to see which (a block raises an alarm, a close is nobody's to act on).
    const reason = 'reason' in event.detail ? event.detail.reason : undefined;
    const ending = endingOfEvent(event.detailType, reason);
    const points = [count(ending.metric), ...(ending.metricByReason && reason !== undefined ? [count(ending.metric, { reason })] : [])];
    if (event.detailType === 'RemediationReplaced')
      return [...points, { name: TIME_TO_REPLACEMENT, unit: 'Milliseconds', value: event.detail.replacedAfterMs }];
    if (event.detailType !== 'RemediationCompleted') return points;
    const took = openedAt === undefined ? undefined : Date.parse(event.detail.at) - openedAt;
    return [...points, ...(took !== undefined && took >= 0 ? [{ name: TIME_TO_REMEDIATE, unit: 'Milliseconds' as const, value: took }] : [])];
  }
  switch (event.detailType) {
    case 'RetryRequested': {
      const { reason } = event.detail;
      return [count(RETRY_REQUESTED, { reason }), ...(isDeferral(reason) ? [count(REMEDIATION_DEFERRED, { reason })] : [])];
    }
    case 'MembersProbed':
      return probeLatencies(event);
    case 'LeaderMoved':
      return [count(LEADER_MOVED)];
    case 'ReplacementOverdue':
      return [count(REPLACEMENT_OVERDUE)];
    case 'LearnerRemoved':
      return [count(LEARNER_REMOVED)];
    case 'HygieneMoveEnded': {
      const { outcome, tookMs } = event.detail;
      // Only a move that moved timed a leadership change; a failed MoveLeader's time is not one.
      const took = outcome === 'moved' && tookMs !== undefined ? [{ name: HYGIENE_MOVE_DURATION, unit: 'Milliseconds' as const, value: tookMs }] : [];
      return [count(HYGIENE_MOVES, { outcome }), ...took];
    }
    case 'MaintenanceEnded':
      return [count(MAINTENANCE_RUNS, { outcome: event.detail.outcome, reason: event.detail.reason }), ...stepDurations(event.detail.evidence.steps)];
    case 'LeaderHygieneAlert':
      return [count(event.detail.phase === 'ended' ? HYGIENE_ALERTS_ENDED : HYGIENE_ALERTS, { reason: event.detail.reason })];
    default:
      return [];
  }
}

/** A dead letter kept, by where it was refused. */
export const deadLetterMetrics = (letter: Pick<DeadLetterInput, 'source'>): MetricPoint[] => [count(DEAD_LETTER, { source: letter.source })];
