// Which metrics an event we publish stands for. Counted where an outcome is published (after the
// step committed it), so a step that fails before its commit counts nothing.
import { isTerminalEvent, type EventEnvelope } from '../../events/catalogue.ts';
import { endingOfEvent } from '../core/incident-endings.ts';

export interface MetricPoint {
  name: string;
  unit: 'Count' | 'Milliseconds';
  value: number;
  dimensions?: Record<string, string>;
}

export const TIME_TO_REMEDIATE = 'TimeToRemediate';
/** From the removal to the check that found the cluster whole again. */
export const TIME_TO_REPLACEMENT = 'TimeToReplacement';
/** A replacement that did not come within its window: CloudWatch alarms on it (infra/cdk/alarms.ts). */
export const REPLACEMENT_OVERDUE = 'ReplacementOverdue';
export const LEARNER_REMOVED = 'LearnerRemoved';

/** `openedAt` (epoch ms) is the incident's, needed for the time to remediate only. */
export function outcomeMetrics(event: EventEnvelope, openedAt?: number): MetricPoint[] {
  const count = (name: string, dimensions?: Record<string, string>): MetricPoint => ({ name, unit: 'Count', value: 1, ...(dimensions ? { dimensions } : {}) });
  if (isTerminalEvent(event)) {
    // The endings table names each ending's metric; blocks and closes are counted once more by
    // reason, to see which (a block raises an alarm, a close is nobody's to act on).
    const reason = 'reason' in event.detail ? event.detail.reason : undefined;
    const ending = endingOfEvent(event.detailType, reason);
    const points = [count(ending.metric), ...(ending.metricByReason && reason !== undefined ? [count(ending.metric, { reason })] : [])];
    if (event.detailType === 'RemediationReplaced') return [...points, { name: TIME_TO_REPLACEMENT, unit: 'Milliseconds', value: event.detail.replacedAfterMs }];
    if (event.detailType !== 'RemediationCompleted') return points;
    const took = openedAt === undefined ? undefined : Date.parse(event.detail.at) - openedAt;
    return [...points, ...(took !== undefined && took >= 0 ? [{ name: TIME_TO_REMEDIATE, unit: 'Milliseconds' as const, value: took }] : [])];
  }
  switch (event.detailType) {
    case 'RetryRequested':
      return [count('RetryRequested')];
    case 'LeaderMoved':
      return [count('LeaderMoved')];
    case 'ReplacementOverdue':
      return [count(REPLACEMENT_OVERDUE)];
    case 'LearnerRemoved':
      return [count(LEARNER_REMOVED)];
    default:
      return [];
  }
}
