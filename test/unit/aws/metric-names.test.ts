// The one table of metric names: every name the functions write as EMF is a row of it, every row is
// served by /metrics under its Prometheus name, and the two sides count the same points.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detailTypes, makeEvent, type EventEnvelope } from '../../../events/catalogue.ts';
import { endingStates, incidentEndings } from '../../../functions/core/incident/incident-endings.ts';
import { metricRow, metricTable, prometheusName } from '../../../functions/core/incident/metric-names.ts';
import { deadLetterMetrics, outcomeMetrics, type MetricPoint } from '../../../functions/lambda/outcome-metrics.ts';
import { prometheusMetrics } from '../../../infra/runtime/prometheus-metrics.ts';
import { loadSample } from '../events/samples.ts';
import { parseExposition, samplesOf } from '../../support/prometheus-text.ts';

const sample = (type: (typeof detailTypes)[number], detail: Record<string, unknown> = {}): EventEnvelope =>
  makeEvent(type, { ...(loadSample(type) as object), ...detail } as never);

/** Every event of the catalogue as its sample, each ending with each reason its row names, and each deferral. */
function everyEvent(): EventEnvelope[] {
  const endings = endingStates.flatMap((state) => {
    const row = incidentEndings[state];
    const reasons = 'byReason' in row ? Object.keys(row.byReason) : [];
    return reasons.map((reason) => sample(row.detailType, { reason }));
  });
  const deferrals = ['FLEET_STORM', 'PAUSED', 'REMOVALS_IN_FLIGHT'].map((reason) => sample('RetryRequested', { reason }));
  // A hygiene alert is said when its hold starts and when it ends, each counted by its own name.
  const alertEnded = sample('LeaderHygieneAlert', { phase: 'ended' });
  return [...detailTypes.map((type) => sample(type)), ...endings, ...deferrals, alertEnded];
}

const pointsOfEveryEvent = (): MetricPoint[] => everyEvent().flatMap((event) => outcomeMetrics(event, 0));

describe('the metric table', () => {
  it('holds every name the functions write, with its unit; none of them is served locally only', () => {
    const points = [...pointsOfEveryEvent(), ...deadLetterMetrics({ source: 'http' })];
    const names = new Set(points.map((p) => p.name));
    for (const point of points) {
      const row = metricRow(point.name);
      expect(row, point.name).toBeDefined();
      expect(row?.unit, point.name).toBe(point.unit);
      expect(row?.localOnly, point.name).toBeUndefined();
      // A point names only the row's labels; a CloudWatch dimension is always one of them.
      for (const label of Object.keys(point.dimensions ?? {})) expect(row?.labels, `${point.name} ${label}`).toContain(label);
    }
    // Every row the events stand for is written by some event: the table has no name nobody writes.
    const written = metricTable.filter((row) => !row.localOnly).map((row) => row.name);
    expect([...names].sort()).toEqual([...written].sort());
  });

  it("is the README's Metrics table, row for row", () => {
    const readme = fs.readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Metrics'), readme.indexOf('**Scraping.**'));
    const rows = section.split('\n').filter((line) => line.startsWith('| `') || line.startsWith('| (none)'));
    expect(rows.map((line) => /`(etcd_remediator_[a-z_]+)`/.exec(line)?.[1])).toEqual(metricTable.map(prometheusName));
    for (const [i, row] of metricTable.entries()) {
      expect(rows[i]!.startsWith(row.localOnly ? '| (none) |' : `| \`${row.name}\` |`), rows[i]).toBe(true);
      const labels = row.labels.map((l) => `\`${l}\`${row.dimensions.includes(l) ? '' : '*'}`).join(', ');
      expect(rows[i]!.split('|').map((cell) => cell.trim())[5], rows[i]).toBe(labels);
    }
  });

  it('names each row for Prometheus in snake_case with its unit suffix', () => {
    const name = (n: string) => prometheusName(metricRow(n)!);
    expect(name('TimeToRemediate')).toBe('etcd_remediator_time_to_remediate_seconds');
    expect(name('RemediationBlocked')).toBe('etcd_remediator_remediation_blocked_total');
    expect(name('Incidents')).toBe('etcd_remediator_incidents');
    for (const row of metricTable) {
      expect(prometheusName(row)).toMatch(/^etcd_remediator_[a-z_]+$/);
      for (const d of row.dimensions) expect(row.labels).toContain(d);
      expect(row.bucketsSeconds !== undefined, row.name).toBe(row.unit === 'Milliseconds');
    }
  });
});

describe('/metrics from the table', () => {
  /** A family's name as the parser gives it: a counter's without _total. */
  const familyName = (row: (typeof metricTable)[number]) => prometheusName(row).replace(/_total$/, '');

  it('serves every row, and counts the points as Prometheus keeps them', async () => {
    const metrics = prometheusMetrics({ liveIncidents: async () => [] });
    for (const point of pointsOfEveryEvent()) metrics.sink(point, 'inc-1');
    const families = parseExposition(await metrics.text());
    const types = new Map(families.map((f) => [f.name, f.type]));
    for (const row of metricTable) {
      expect(types.get(familyName(row)), prometheusName(row)).toBe(row.unit === 'Milliseconds' ? 'histogram' : row.localOnly ? 'gauge' : 'counter');
    }

    // The sample's reason and each byReason reason once; CloudWatch's total point is not a series of its own.
    const blockedReasons = ['QUORUM_AT_RISK', ...Object.keys(incidentEndings.blocked.byReason)];
    const blocked = samplesOf(families, 'etcd_remediator_remediation_blocked_total');
    expect(blocked.map((s) => [s.labels.reason, s.value]).sort()).toEqual(
      [...new Set(blockedReasons)].map((r) => [r, blockedReasons.filter((x) => x === r).length]).sort(),
    );
    expect(samplesOf(families, 'etcd_remediator_time_to_remediate_seconds_count').map((s) => s.value)).toEqual([1]);
    expect(
      samplesOf(families, 'etcd_remediator_remediation_deferred_total')
        .map((s) => s.labels.reason)
        .sort(),
    ).toEqual(['FLEET_STORM', 'PAUSED', 'REMOVALS_IN_FLIGHT']);
    // Milliseconds in, seconds out: the sample's 2000 ms timeout is 2 s.
    const timedOut = samplesOf(families, 'etcd_remediator_probe_latency_seconds_sum', { member: 'prod-eu-1-cp-a', path: 'direct', reachability: 'timeout' });
    expect(timedOut.map((s) => s.value)).toEqual([2]);
    // Leader hygiene: the sample's move counted by its outcome, its 180 ms as 0.18 s; the alert by its reason.
    expect(samplesOf(families, 'etcd_remediator_hygiene_moves_total').map((s) => [s.labels.outcome, s.value])).toEqual([['moved', 1]]);
    expect(samplesOf(families, 'etcd_remediator_hygiene_move_duration_seconds_sum').map((s) => s.value)).toEqual([0.18]);
    expect(samplesOf(families, 'etcd_remediator_hygiene_alerts_total').map((s) => [s.labels.reason, s.value])).toEqual([['HYGIENE_SHARED_DEGRADATION', 1]]);
    expect(samplesOf(families, 'etcd_remediator_hygiene_alerts_ended_total').map((s) => [s.labels.reason, s.value])).toEqual([
      ['HYGIENE_SHARED_DEGRADATION', 1],
    ]);
  });

  it('counts live incidents by state and the reason of their last decision, read at each scrape', async () => {
    let live = [{ state: 'open' as const, lastDecision: { reason: 'LEADER_UNREACHABLE' } }, { state: 'open' as const }];
    const metrics = prometheusMetrics({ liveIncidents: async () => live });
    const gauge = async () =>
      samplesOf(parseExposition(await metrics.text()), 'etcd_remediator_incidents').map((s) => [s.labels.state, s.labels.reason, s.value]);
    expect((await gauge()).sort()).toEqual([
      ['open', '', 1],
      ['open', 'LEADER_UNREACHABLE', 1],
    ]);
    live = [{ state: 'awaiting-replacement' as never, lastDecision: { reason: 'LEADER_UNREACHABLE' } }];
    expect(await gauge()).toEqual([['awaiting-replacement', 'LEADER_UNREACHABLE', 1]]);
  });

  it('a scrape whose store read fails rejects, for the route to say 503', async () => {
    const metrics = prometheusMetrics({ liveIncidents: async () => Promise.reject(new Error('database is locked')) });
    await expect(metrics.text()).rejects.toThrow('database is locked');
  });
});
