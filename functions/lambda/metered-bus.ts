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
import { outcomeMetrics, type MetricPoint } from './outcome-metrics.ts';

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

/** EMF through Powertools: one JSON line a point, written at once (no flush to forget). */
export function powertoolsSink(metrics: Metrics): MetricSink {
  return (point, incidentId) => {
    const single = metrics.singleMetric();
    for (const [name, value] of Object.entries(point.dimensions ?? {})) single.addDimension(name, value);
    if (incidentId) single.addMetadata('incidentId', incidentId);
    single.addMetric(point.name, MetricUnit[point.unit], point.value);
  };
}
