// Which metrics an event we publish stands for. Counted where an outcome is published (after the
// step committed it), so a step that fails before its commit counts nothing.
import type { EventEnvelope } from '../../events/catalogue.ts';

export interface MetricPoint {
  name: string;
  unit: 'Count' | 'Milliseconds';
  value: number;
  dimensions?: Record<string, string>;
}

export const TIME_TO_REMEDIATE = 'TimeToRemediate';

/** `openedAt` (epoch ms) is the incident's, needed for the time to remediate only. */
export function outcomeMetrics(event: EventEnvelope, openedAt?: number): MetricPoint[] {
  const count = (name: string, dimensions?: Record<string, string>): MetricPoint => ({ name, unit: 'Count', value: 1, ...(dimensions ? { dimensions } : {}) });
  switch (event.detailType) {
    case 'RemediationCompleted': {
      const took = openedAt === undefined ? undefined : Date.parse(event.detail.at) - openedAt;
      return [count('RemediationCompleted'), ...(took !== undefined && took >= 0 ? [{ name: TIME_TO_REMEDIATE, unit: 'Milliseconds' as const, value: took }] : [])];
    }
    case 'RemediationBlocked':
      // Once in total, for an alarm on any block, and once by reason, to see which.
      return [count('RemediationBlocked'), count('RemediationBlocked', { reason: event.detail.reason })];
    case 'RemediationClosed':
      // Nobody must act, so no alarm: counted, and by reason, to see how often reports heal by themselves.
      return [count('RemediationClosed'), count('RemediationClosed', { reason: event.detail.reason })];
    case 'RemediationFailed':
      return [count('RemediationFailed')];
    case 'RetryRequested':
      return [count('RetryRequested')];
    case 'LeaderMoved':
      return [count('LeaderMoved')];
    default:
      return [];
  }
}
