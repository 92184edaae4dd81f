// Durations on the command line and in config files, as Go's time.Duration writes them (and so
// as Kubernetes users type them): numbers with units ms, s, m, h, largest first, e.g. 300ms, 1.5s,
// 2m5s, 1h30m, 1h0m0s; "0" alone is zero. Strict, so "5x", "5" or "5 s" is an error rather
// than a guess.
const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;
const UNITS = Object.keys(UNIT_MS) as Unit[];
/** One number and what follows it up to the next digit: the unit, or whatever stands there. */
const PART = /(\d+(?:\.\d+)?|\.\d+)(\D*)/y;

export const DURATION_HINT = 'use e.g. 500ms, 30s, 1h30m';

/** Milliseconds, or the problem with `text`. */
function readDuration(text: string): { ms: number } | { problem: string } {
  if (text === '') return { problem: 'it is empty' };
  if (text === '0') return { ms: 0 };
  if (text.startsWith('-')) return { problem: 'it must not be negative' };
  let total = 0;
  let last = -1;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const at = PART.lastIndex;
    const match = PART.exec(text);
    if (!match) return { problem: `${JSON.stringify(text.slice(at))} is not a number with a unit` };
    const number = match[1]!;
    const unit = match[2]!;
    if (unit === '') return { problem: `a unit is missing after ${JSON.stringify(number)}` };
    const rank = UNITS.indexOf(unit as Unit);
    if (rank < 0) return { problem: `${JSON.stringify(unit)} is not a unit` };
    // Go would add up "30m1h" or "1m1m"; written that way it is more likely a slip than meant.
    if (rank <= last) return { problem: 'its units must go from the largest to the smallest, each once' };
    last = rank;
    total += Number(number) * UNIT_MS[unit as Unit];
  }
  const ms = Math.round(total);
  return Number.isSafeInteger(ms) ? { ms } : { problem: 'it is too long' };
}

/** Milliseconds, or undefined when `text` is not a duration. */
export function parseDuration(text: string): number | undefined {
  const read = readDuration(text);
  return 'ms' in read ? read.ms : undefined;
}

/** The error sentence for a value that is not a duration, without the flag's name. */
export function notADuration(text: string): string {
  const read = readDuration(text);
  const problem = 'problem' in read ? `: ${read.problem}` : '';
  return `${JSON.stringify(text)} is not a duration${problem} (${DURATION_HINT})`;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * The command line's one duration formatter (sentences say theirs through core's describeDuration).
 * `exact`, for progress lines, flags and their defaults: "850ms", "3.2s", "2m5s", which
 * parseDuration reads back. `age`, for a table's columns: two units at most, truncated, so a
 * column keeps its width: 42s, 3m10s, 2h5m, 2d2h.
 */
export function formatDuration(ms: number, style: 'exact' | 'age' = 'exact'): string {
  if (style === 'age') {
    const t = Math.max(0, ms);
    if (t < MINUTE) return `${Math.floor(t / SECOND)}s`;
    if (t < HOUR) return `${Math.floor(t / MINUTE)}m${Math.floor((t % MINUTE) / SECOND)}s`;
    if (t < DAY) return `${Math.floor(t / HOUR)}h${Math.floor((t % HOUR) / MINUTE)}m`;
    return `${Math.floor(t / DAY)}d${Math.floor((t % DAY) / HOUR)}h`;
  }
  if (ms < SECOND) return `${Math.round(ms)}ms`;
  if (ms < MINUTE) return `${Number((ms / SECOND).toFixed(ms < 10 * SECOND ? 2 : 1))}s`;
  // Rounded to whole seconds first, so 119.6 s is "2m0s", not "1m60s".
  const seconds = Math.round(ms / SECOND);
  return `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

/** A table's age column: formatDuration's `age` style. */
export const formatAge = (ms: number): string => formatDuration(ms, 'age');
