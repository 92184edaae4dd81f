// A bus that counts the outcomes it carries, once each: counted when the outbox that carried them
// is cleared (step.ts), not when published. A publish is repeated whenever an outbox is left over
// (a crash between publish and clearing, a clearing write refused) and the repeat cannot tell
// whether the first went out; the clearing is one conditional write, which lands once. A process
// that dies between its clearing and its count loses that count: rare, and the counts are for
// alarms and dashboards, not the incident record.
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { EventEnvelope } from '../../events/catalogue.ts';
import type { Log } from '../ports/log.ts';
import type { Bus } from '../ports/bus.ts';
import type { DeadLetters } from '../ports/incident-store.ts';
import { metricRow } from '../core/incident/index.ts';
import { deadLetterMetrics, outcomeMetrics, type MetricPoint } from './outcome-metrics.ts';

/** Where a point goes; `incidentId` rides along as metadata, never as a dimension. */
export type MetricSink = (point: MetricPoint, incidentId: string) => void;

export interface MeteredBusOptions {
  sink: MetricSink;
  /** When the incident opened, for the time to remediate. */
  openedAt: (incidentId: string) => Promise<number | undefined>;
  log: Log;
}

export function meteredBus(inner: Bus, options: MeteredBusOptions): Bus {
  return {
    publish: (...events) => inner.publish(...events),
    async settled(events) {
      for (const event of events) await record(options, event);
    },
  };
}

/** Never throws: a metric lost must not fail a step whose outcome is already committed and said. */
async function record(options: MeteredBusOptions, event: EventEnvelope): Promise<void> {
  const incidentId = (event.detail as { incidentId?: string }).incidentId ?? '';
  try {
    const openedAt = event.detailType === 'RemediationCompleted' ? await options.openedAt(incidentId) : undefined;
    for (const point of outcomeMetrics(event, openedAt)) options.sink(point, incidentId);
  } catch (error) {
    options.log.warn('metric not recorded', { detailType: event.detailType, incidentId, error: String(error) });
  }
}

/**
 * Counts each dead letter the store keeps, once it is kept. The store keeps private state: every
 * other method runs on the store itself. Never throws for the count: the letter is kept.
 */
export function meteredDeadLetters<S extends DeadLetters>(store: S, sink: MetricSink, log: Log): S {
  const putDeadLetter: DeadLetters['putDeadLetter'] = async (input) => {
    const dead = await store.putDeadLetter(input);
    try {
      for (const point of deadLetterMetrics(input)) sink(point, '');
    } catch (error) {
      log.warn('metric not recorded', { deadLetterId: dead.id, error: String(error) });
    }
    return dead;
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'putDeadLetter') return putDeadLetter;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * EMF through Powertools: one JSON line a point, written at once (no flush to forget). Only the
 * table's dimensions of the metric are dimensions (each combination is a metric CloudWatch bills);
 * its other labels, and the incident id, are metadata, searchable in the logs.
 */
export function powertoolsSink(metrics: Metrics): MetricSink {
  return (point, incidentId) => {
    const single = metrics.singleMetric();
    const dimensions = metricRow(point.name)?.dimensions ?? [];
    for (const [name, value] of Object.entries(point.dimensions ?? {})) {
      if (dimensions.includes(name)) single.addDimension(name, value);
      else single.addMetadata(name, value);
    }
    if (incidentId) single.addMetadata('incidentId', incidentId);
    single.addMetric(point.name, MetricUnit[point.unit], point.value);
  };
}
