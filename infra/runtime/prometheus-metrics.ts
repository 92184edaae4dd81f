// The metric table (functions/core/incident/metric-names.ts) as Prometheus series, for `run` and `watch`'s
// /metrics: the same points the functions write as EMF on AWS, fed by the same sink, in a registry
// of our own (the global default would take whatever else in the process registers there).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { metricTable, prometheusName, type MetricRow, type IncidentState } from '../../functions/core/incident/index.ts';
import type { MetricSink } from '../../functions/lambda/metered-bus.ts';

/** What the incidents gauge reads of each live incident. */
export interface LiveIncident {
  state: IncidentState;
  lastDecision?: { reason: string } | undefined;
}

export interface PrometheusMetricsOptions {
  /**
   * The incidents open or awaiting their replacement, read at each scrape. Only those: an ended
   * incident's count only grows, which the endings' counters say, and a gauge over every state
   * would read every incident the state file ever kept at each scrape. The live ones are bounded
   * by the fleet, and their state × last reason by the reason table.
   */
  liveIncidents: () => Promise<LiveIncident[]>;
}

export interface PrometheusMetrics {
  /** Where the metered bus and the dead letters put their points. */
  sink: MetricSink;
  /** The exposition, in the text format; rejects when the live incidents cannot be read. */
  text(): Promise<string>;
  contentType: string;
}

type Series = { kind: 'counter'; metric: Counter } | { kind: 'histogram'; metric: Histogram };

function seriesOf(row: MetricRow, registry: Registry): Series {
  const common = { name: prometheusName(row), help: row.meaning, labelNames: [...row.labels], registers: [registry] };
  if (row.unit === 'Milliseconds') return { kind: 'histogram', metric: new Histogram({ ...common, buckets: [...(row.bucketsSeconds ?? [])] }) };
  return { kind: 'counter', metric: new Counter(common) };
}

/** The point's labels, as its row names them; undefined for a point without all of them (CloudWatch's total). */
function labelsOf(row: MetricRow, dimensions: Record<string, string> = {}): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  for (const label of row.labels) {
    const value = dimensions[label];
    if (value === undefined) return undefined;
    labels[label] = value;
  }
  return labels;
}

export function prometheusMetrics(options: PrometheusMetricsOptions): PrometheusMetrics {
  const registry = new Registry();
  const series = new Map<string, Series>();
  for (const row of metricTable) {
    if (row.localOnly) continue;
    series.set(row.name, seriesOf(row, registry));
  }
  const incidents = metricTable.find((row) => row.localOnly)!;
  new Gauge({
    name: prometheusName(incidents),
    help: incidents.meaning,
    labelNames: [...incidents.labels],
    registers: [registry],
    async collect() {
      const live = await options.liveIncidents();
      this.reset();
      for (const incident of live) this.inc({ state: incident.state, reason: incident.lastDecision?.reason ?? '' });
    },
  });
  const rows = new Map(metricTable.map((row) => [row.name, row]));
  return {
    sink(point) {
      const row = rows.get(point.name);
      const found = series.get(point.name);
      const labels = row && labelsOf(row, point.dimensions);
      if (!found || !labels) return;
      if (found.kind === 'histogram') found.metric.observe(labels, point.value / 1_000);
      else found.metric.inc(labels, point.value);
    },
    text: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
