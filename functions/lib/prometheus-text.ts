// A small, strict reader of the Prometheus text exposition format (0.0.4), enough for etcd's
// /metrics: counters, gauges, untyped samples and histograms with their labels kept (the npm
// parser of the format drops a labelled histogram's). Pure. Anything it cannot read is refused
// with the line number, never guessed at.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** As written: a counter's ends _total, a histogram's _bucket, _sum or _count. */
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
  timestampMs?: number;
  /** Where it was read (from 1), so a check of its family can name the line. */
  line?: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help?: string;
  samples: Sample[];
}

export class PrometheusTextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrometheusTextError';
  }
}

const TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
/** Decimal floats as Go's ParseFloat reads them, and its spellings of infinity and NaN. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INF = /^([+-]?)inf(inity)?$/i;
const TIMESTAMP = /^-?\d+$/;

/** A sample value, or undefined when it is not one. */
export function parseValue(text: string): number | undefined {
  if (DECIMAL.test(text)) return Number(text);
  const inf = INF.exec(text);
  if (inf) return inf[1] === '-' ? -Infinity : Infinity;
  return /^nan$/i.test(text) ? NaN : undefined;
}

/** The family a sample belongs to: its own name, or a histogram's or summary's it is a part of. */
function familyNameOf(name: string, types: ReadonlyMap<string, MetricType>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const type = types.get(base);
    if (type === 'histogram' || (type === 'summary' && suffix !== '_bucket')) return base;
  }
  return name;
}

const unescapeHelp = (text: string): string => text.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));

class Line {
  pos = 0;
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  rest(): string {
    return this.text.slice(this.pos);
  }
  skipBlanks(): void {
    while (this.text[this.pos] === ' ' || this.text[this.pos] === '\t') this.pos++;
  }
  take(pattern: RegExp): string | undefined {
    const match = pattern.exec(this.rest());
    if (!match) return undefined;
    this.pos += match[0].length;
    return match[0];
  }
}

function labelValue(line: Line, label: string): string {
  let value = '';
  for (;;) {
    const c = line.text[line.pos++];
    if (c === undefined) throw new PrometheusTextError(`unterminated label value of ${label}`);
    if (c === '"') return value;
    if (c !== '\\') {
      value += c;
      continue;
    }
    const escaped = line.text[line.pos++];
    if (escaped === '\\' || escaped === '"') value += escaped;
    else if (escaped === 'n') value += '\n';
    else throw new PrometheusTextError(`label ${label}: unknown escape \\${escaped ?? ''} (only \\\\, \\" and \\n)`);
  }
}

function labels(line: Line): Record<string, string> {
  const read: Record<string, string> = {};
  line.pos++; // the {
  for (;;) {
    line.skipBlanks();
    if (line.text[line.pos] === '}') break;
    const name = line.take(LABEL_NAME);
    if (name === undefined) throw new PrometheusTextError(`expected a label name at "${line.rest()}"`);
    line.skipBlanks();
    if (line.text[line.pos] !== '=') throw new PrometheusTextError(`label ${name}: expected = at "${line.rest()}"`);
    line.pos++;
    line.skipBlanks();
    if (line.text[line.pos] !== '"') throw new PrometheusTextError(`label ${name}: expected a quoted value at "${line.rest()}"`);
    line.pos++;
    if (Object.hasOwn(read, name)) throw new PrometheusTextError(`label ${name} twice`);
    read[name] = labelValue(line, name);
    line.skipBlanks();
    if (line.text[line.pos] === ',') line.pos++;
    else if (line.text[line.pos] !== '}') throw new PrometheusTextError(`label ${name}: expected , or } at "${line.rest()}"`);
  }
  line.pos++; // the }
  return read;
}

function sample(text: string): Sample {
  const line = new Line(text);
  const name = line.take(METRIC_NAME);
  if (name === undefined) throw new PrometheusTextError(`"${text}" does not start with a metric name`);
  line.skipBlanks();
  const read = line.text[line.pos] === '{' ? labels(line) : {};
  const [valueText, timestampText, extra] = line
    .rest()
    .trim()
    .split(/[ \t]+/)
    .filter((t) => t !== '');
  if (valueText === undefined) throw new PrometheusTextError(`${name}: no value`);
  const value = parseValue(valueText);
  if (value === undefined) throw new PrometheusTextError(`${name}: value "${valueText}" is not a number`);
  if (extra !== undefined) throw new PrometheusTextError(`${name}: unexpected "${extra}" after the timestamp`);
  if (timestampText === undefined) return { name, labels: read, value };
  if (!TIMESTAMP.test(timestampText)) throw new PrometheusTextError(`${name}: timestamp "${timestampText}" is not integer milliseconds`);
  return { name, labels: read, value, timestampMs: Number(timestampText) };
}

/** Every family of `text`, in the order first seen. Throws PrometheusTextError naming the line. */
export function parsePrometheusText(text: string): Family[] {
  const families = new Map<string, Family>();
  const types = new Map<string, MetricType>();
  const helps = new Set<string>();
  const familyOf = (name: string): Family => {
    let family = families.get(name);
    if (!family) {
      family = { name, type: types.get(name) ?? 'untyped', samples: [] };
      families.set(name, family);
    }
    return family;
  };
  const lines = text.split('\n');
  lines.forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed === '') return;
    try {
      if (!trimmed.startsWith('#')) {
        const read = sample(trimmed);
        familyOf(familyNameOf(read.name, types)).samples.push({ ...read, line: index + 1 });
        return;
      }
      const [, keyword, name, ...rest] = trimmed.split(/[ \t]+/);
      if ((keyword !== 'HELP' && keyword !== 'TYPE') || name === undefined) return; // a comment
      if (!METRIC_NAME.test(name) || METRIC_NAME.exec(name)![0] !== name) throw new PrometheusTextError(`# ${keyword}: "${name}" is not a metric name`);
      if (keyword === 'TYPE') {
        const type = rest[0] ?? '';
        if (!TYPES.has(type)) throw new PrometheusTextError(`# TYPE ${name}: type "${type}" is none of ${[...TYPES].join(', ')}`);
        if (types.has(name)) throw new PrometheusTextError(`second TYPE of ${name}`);
        if (families.get(name)?.samples.length) throw new PrometheusTextError(`TYPE of ${name} after its samples`);
        types.set(name, type as MetricType);
        familyOf(name).type = type as MetricType;
        return;
      }
      if (helps.has(name)) throw new PrometheusTextError(`second HELP of ${name}`);
      helps.add(name);
      // HELP's text is the rest of the line as written, blanks inside kept.
      const help = /^#[ \t]+HELP[ \t]+\S+[ \t]?(.*)$/.exec(trimmed)?.[1] ?? '';
      familyOf(name).help = unescapeHelp(help);
    } catch (error) {
      if (error instanceof PrometheusTextError) throw new PrometheusTextError(`line ${index + 1}: ${error.message}`);
      throw error;
    }
  });
  return [...families.values()];
}

/** One series of a histogram family: its labels (without le), cumulative buckets ending +Inf, sum and count. */
export interface HistogramSeries {
  labels: Readonly<Record<string, string>>;
  buckets: [number, number][];
  sum: number;
  count: number;
}

const seriesKey = (labels: Readonly<Record<string, string>>): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));

/** A bucket as read: its bound, its cumulative count, and the line it was on. */
type BucketRead = { bound: number; le: string; count: number; line: number | undefined };

const at = (line: number | undefined): string => (line === undefined ? '' : `line ${line}: `);

/** A sample's name and labels as the exposition writes them: h_bucket{To="a",le="0.1"}. */
const written = (name: string, labels: Readonly<Record<string, string>>): string => {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return pairs.length === 0 ? name : `${name}{${pairs.join(',')}}`;
};

/**
 * The series of a histogram family, checked: every bucket count a finite number ≥ 0 (le="+Inf" is
 * a bound, never a count), the counts never falling as the bound rises, +Inf present and equal to
 * _count. A refusal names the line and the series: a NaN count compares false with everything, so
 * let through it would read as no observation, or as the highest bound.
 */
export function histogramsOf(family: Family): HistogramSeries[] {
  const bySeries = new Map<string, { labels: Record<string, string>; buckets: BucketRead[]; sum?: number; count?: number; countLine?: number }>();
  const seriesOf = (labels: Record<string, string>) => {
    const key = seriesKey(labels);
    let series = bySeries.get(key);
    if (!series) bySeries.set(key, (series = { labels, buckets: [] }));
    return series;
  };
  for (const { name, labels, value, line } of family.samples) {
    if (name === `${family.name}_bucket`) {
      const { le, ...rest } = labels;
      const bound = le === undefined ? undefined : parseValue(le);
      if (bound === undefined || Number.isNaN(bound)) throw new PrometheusTextError(`${at(line)}${family.name}: le="${le ?? ''}" is not a number`);
      if (!Number.isFinite(value) || value < 0) throw new PrometheusTextError(`${at(line)}${written(name, labels)} counts ${value}, not a finite number ≥ 0`);
      seriesOf(rest).buckets.push({ bound, le: le!, count: value, line });
    } else if (name === `${family.name}_sum`) seriesOf({ ...labels }).sum = value;
    else if (name === `${family.name}_count`) Object.assign(seriesOf({ ...labels }), { count: value, countLine: line });
  }
  return [...bySeries.values()].map(({ labels, buckets, sum, count, countLine }) => {
    const where = written(family.name, labels);
    buckets.sort((a, b) => a.bound - b.bound);
    const last = buckets.at(-1);
    if (last?.bound !== Infinity) throw new PrometheusTextError(`${where}: no le="+Inf" bucket`);
    buckets.forEach(({ le, count: n, line }, i) => {
      const before = buckets[i - 1];
      if (before && n < before.count) {
        const then = `${before.count}${before.line === undefined ? '' : ` on line ${before.line}`}`;
        throw new PrometheusTextError(
          `${at(line)}${where}: bucket le="${le}" counts ${n}, fewer than le="${before.le}" (${then}): cumulative counts never fall`,
        );
      }
    });
    if (sum === undefined || count === undefined) throw new PrometheusTextError(`${where}: no _sum or _count`);
    if (count !== last.count) throw new PrometheusTextError(`${at(countLine)}${where}: _count ${count} is not the +Inf bucket's ${last.count}`);
    return { labels, buckets: buckets.map(({ bound, count: n }): [number, number] => [bound, n]), sum, count };
  });
}
