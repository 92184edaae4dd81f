// The exposition parser against the text format's own edge cases (Prometheus "Exposition
// formats", text format 0.0.4); real etcd output is in the member-metrics integration test.
import { describe, expect, it } from 'vitest';
import { histogramsOf, parsePrometheusText, PrometheusTextError } from '../../../functions/lib/prometheus-text.ts';

describe('parsePrometheusText', () => {
  it('reads counters, gauges and untyped samples with their HELP and TYPE, comments and blank lines skipped', () => {
    const families = parsePrometheusText(
      [
        '# HELP http_requests_total The total number of HTTP requests.',
        '# TYPE http_requests_total counter',
        'http_requests_total{method="post",code="200"} 1027 1395066363000',
        'http_requests_total{method="post",code="400"}    3 1395066363000',
        '',
        '# A normal comment, and one with a # HELP-like tail',
        '#',
        'metric_without_timestamp_and_labels 12.47',
        '  # TYPE temp gauge',
        'temp\t-3.5e-2',
      ].join('\n'),
    );
    expect(families.map((f) => [f.name, f.type, f.help])).toEqual([
      ['http_requests_total', 'counter', 'The total number of HTTP requests.'],
      ['metric_without_timestamp_and_labels', 'untyped', undefined],
      ['temp', 'gauge', undefined],
    ]);
    expect(families[0]!.samples).toEqual([
      { name: 'http_requests_total', labels: { method: 'post', code: '200' }, value: 1027, timestampMs: 1395066363000, line: 3 },
      { name: 'http_requests_total', labels: { method: 'post', code: '400' }, value: 3, timestampMs: 1395066363000, line: 4 },
    ]);
    expect(families[2]!.samples[0]!.value).toBe(-0.035);
  });

  it('unescapes label values (\\\\, \\", \\n) and HELP text (\\\\, \\n), and takes a trailing comma', () => {
    const [family] = parsePrometheusText(
      [
        '# HELP msdos_file_access_time_seconds Time \\\\ of access\\nsecond line',
        'msdos_file_access_time_seconds{path="C:\\\\DIR\\\\FILE.TXT",error="Cannot find file:\\n\\"FILE.TXT\\"",} 1.458255915e9',
      ].join('\n'),
    );
    expect(family!.help).toBe('Time \\ of access\nsecond line');
    expect(family!.samples[0]!.labels).toEqual({ path: 'C:\\DIR\\FILE.TXT', error: 'Cannot find file:\n"FILE.TXT"' });
    expect(family!.samples[0]!.value).toBe(1458255915);
  });

  it('reads +Inf, -Inf, NaN and exponents, and an empty label set', () => {
    const samples = parsePrometheusText(['a +Inf', 'b -Inf', 'c NaN', 'd 1E+3', 'e{} 2.5e-06', 'f Inf'].join('\n')).flatMap((f) =>
      f.samples.map((s) => s.value),
    );
    expect(samples.slice(0, 2)).toEqual([Infinity, -Infinity]);
    expect(samples[2]).toBeNaN();
    expect(samples.slice(3)).toEqual([1000, 2.5e-6, Infinity]);
  });

  it("groups a histogram's _bucket, _sum and _count under its family, per label set, buckets ascending to +Inf", () => {
    const families = parsePrometheusText(
      [
        '# TYPE rtt_seconds histogram',
        'rtt_seconds_bucket{To="a",le="0.1"} 1',
        'rtt_seconds_bucket{To="a",le="0.2"} 3',
        'rtt_seconds_bucket{To="a",le="+Inf"} 4',
        'rtt_seconds_sum{To="a"} 0.9',
        'rtt_seconds_count{To="a"} 4',
        'rtt_seconds_bucket{To="b",le="1e-1"} 0',
        'rtt_seconds_bucket{To="b",le="+Inf"} 0',
        'rtt_seconds_sum{To="b"} 0',
        'rtt_seconds_count{To="b"} 0',
      ].join('\n'),
    );
    expect(families).toHaveLength(1);
    expect(families[0]!.type).toBe('histogram');
    expect(histogramsOf(families[0]!)).toEqual([
      {
        labels: { To: 'a' },
        buckets: [
          [0.1, 1],
          [0.2, 3],
          [Infinity, 4],
        ],
        sum: 0.9,
        count: 4,
      },
      {
        labels: { To: 'b' },
        buckets: [
          [0.1, 0],
          [Infinity, 0],
        ],
        sum: 0,
        count: 0,
      },
    ]);
  });

  it('refuses a histogram without +Inf, or whose +Inf is not its count', () => {
    const histogram = (...lines: string[]) => histogramsOf(parsePrometheusText(['# TYPE h histogram', ...lines].join('\n'))[0]!);
    expect(() => histogram('h_bucket{le="1"} 1', 'h_sum 1', 'h_count 1')).toThrow(/h: no le="\+Inf" bucket/);
    expect(() => histogram('h_bucket{le="+Inf"} 2', 'h_sum 1', 'h_count 3')).toThrow(/^line 4: h: _count 3 is not the \+Inf bucket's 2$/);
    expect(() => histogram('h_bucket{le="x"} 2', 'h_sum 1', 'h_count 2')).toThrow(/^line 2: h: le="x" is not a number$/);
  });

  // A NaN count compares false with everything: let through, it read as no observation or as the highest bound.
  it.each([
    {
      row: 'a NaN count',
      lines: ['h_bucket{le="0.001"} 1', 'h_bucket{le="0.002"} NaN', 'h_bucket{le="+Inf"} 2', 'h_sum 1', 'h_count 2'],
      says: /^line 3: h_bucket\{le="0\.002"\} counts NaN, not a finite number ≥ 0$/,
    },
    {
      row: 'a NaN +Inf count',
      lines: ['h_bucket{le="0.001"} 1', 'h_bucket{le="+Inf"} NaN', 'h_sum 1', 'h_count NaN'],
      says: /^line 3: h_bucket\{le="\+Inf"\} counts NaN, not a finite number ≥ 0$/,
    },
    {
      row: 'an infinite count',
      lines: ['h_bucket{le="0.001"} +Inf', 'h_bucket{le="+Inf"} +Inf', 'h_sum 1', 'h_count +Inf'],
      says: /^line 2: h_bucket\{le="0\.001"\} counts Infinity, not a finite number ≥ 0$/,
    },
    {
      row: 'a negative count',
      lines: ['h_bucket{le="0.001"} -1', 'h_bucket{le="+Inf"} 0', 'h_sum 0', 'h_count 0'],
      says: /^line 2: h_bucket\{le="0\.001"\} counts -1, not a finite number ≥ 0$/,
    },
    {
      row: 'a labelled series, NaN',
      lines: ['h_bucket{To="b2",le="0.001"} NaN', 'h_bucket{To="b2",le="+Inf"} 1', 'h_sum{To="b2"} 1', 'h_count{To="b2"} 1'],
      says: /^line 2: h_bucket\{To="b2",le="0\.001"\} counts NaN/,
    },
    {
      row: 'counts that fall as the bound rises, written out of order',
      lines: ['h_bucket{le="+Inf"} 2', 'h_bucket{le="2"} 1', 'h_bucket{le="1"} 2', 'h_sum 1', 'h_count 2'],
      says: /^line 3: h: bucket le="2" counts 1, fewer than le="1" \(2 on line 4\): cumulative counts never fall$/,
    },
    {
      row: 'a labelled series that falls',
      lines: ['h_bucket{To="b2",le="1"} 5', 'h_bucket{To="b2",le="+Inf"} 4', 'h_sum{To="b2"} 1', 'h_count{To="b2"} 4'],
      says: /^line 3: h\{To="b2"\}: bucket le="\+Inf" counts 4, fewer than le="1" \(5 on line 2\)/,
    },
  ])('refuses $row, naming the line and the series', ({ lines, says }) => {
    const family = parsePrometheusText(['# TYPE h histogram', ...lines].join('\n'))[0]!;
    expect(() => histogramsOf(family)).toThrow(PrometheusTextError);
    expect(() => histogramsOf(family)).toThrow(says);
  });

  it('takes le="+Inf" as a bound, and a NaN or infinite _sum (a NaN observed) as read: the mean says it, not the parser', () => {
    const [family] = parsePrometheusText(['# TYPE h histogram', 'h_bucket{le="0.5"} 1', 'h_bucket{le="+Inf"} 2', 'h_sum NaN', 'h_count 2'].join('\n'));
    const [series] = histogramsOf(family!);
    expect(series!.buckets).toEqual([
      [0.5, 1],
      [Infinity, 2],
    ]);
    expect(series!.sum).toBeNaN();
  });

  it('refuses malformed lines, naming the line', () => {
    const refused = (text: string) => {
      try {
        parsePrometheusText(text);
      } catch (error) {
        expect(error).toBeInstanceOf(PrometheusTextError);
        return (error as Error).message;
      }
      return 'parsed';
    };
    expect(refused('ok 1\n9bad 1')).toMatch(/^line 2: /);
    expect(refused('a{x="1} 1')).toMatch(/line 1: .*unterminated label value/);
    expect(refused('a{x="\\t"} 1')).toMatch(/line 1: .*escape \\t/);
    expect(refused('a{x="1",x="2"} 1')).toMatch(/line 1: .*label x twice/);
    expect(refused('a one')).toMatch(/line 1: .*value "one" is not a number/);
    expect(refused('a 1 soon')).toMatch(/line 1: .*timestamp "soon"/);
    expect(refused('a')).toMatch(/line 1: .*no value/);
    expect(refused('# TYPE a meter')).toMatch(/line 1: .*type "meter"/);
    expect(refused('a 1\n# TYPE a gauge')).toMatch(/line 2: .*TYPE of a after its samples/);
    expect(refused('# TYPE a gauge\n# TYPE a gauge')).toMatch(/line 2: .*second TYPE of a/);
    expect(refused('# HELP a x\n# HELP a y')).toMatch(/line 2: .*second HELP of a/);
  });
});
