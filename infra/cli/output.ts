// What every command prints: the result shape of plan and remediate, exit codes, and plain-text
// rendering (tables, timelines with relative times).
import type { LeaderMove } from '../../functions/core/common/index.ts';
import { endingOfOutcome, incidentEndings, type EndingOutcome, type TimelineEntry } from '../../functions/core/incident/index.ts';
import { escapeControlsIn } from './control-chars.ts';
import { formatDuration } from './duration.ts';

export type { TimelineEntry } from '../../functions/core/incident/index.ts';

/** How an incident ended (the endings table's word), or 'planned' for plan. */
export type Outcome = EndingOutcome | 'planned';

/** The result of `plan` and `remediate`; outside tools read this shape. */
export interface CliResult {
  incidentId: string;
  clusterId: string;
  /** memberId '0' while the report never resolved to a member; `reportedAs` then says what it named. */
  target: { memberId: string; name: string; reportedAs?: string };
  outcome: Outcome;
  /** A reason code (functions/core/common/reason-table.ts), or REMEDIATED when no approval is on record. */
  reason: string;
  message: string;
  /** `planned` in a dry run (plan), where a move would come first but nothing moved. */
  leaderMove: LeaderMove | 'planned';
  timeline: TimelineEntry[];
  evidence: Record<string, unknown>;
  /** What a person should read before acting on it (a healthy target), also said on stderr. */
  warnings?: string[];
}

/** The endings' codes are the endings table's (a block whose reason says the input was wrong exits 2 there). */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  blocked: incidentEndings.blocked.exitCode,
  failed: incidentEndings.failed.exitCode,
  closed: incidentEndings.closed.exitCode,
} as const;

export const exitCodeOf = (outcome: Outcome, reason?: string): number => (outcome === 'planned' ? EXIT.ok : endingOfOutcome(outcome, reason).exitCode);

/** How long exiting waits on a reader that takes nothing at all; a reader still reading is waited for. */
export const FLUSH_STALL_MS = 30_000;

/** Settles once all written to `stream` so far is with the OS, or the stream failed (a reader gone: EPIPE). */
const drained = (stream: NodeJS.WriteStream): Promise<void> =>
  new Promise((resolve) => {
    // Writes complete in order, so an empty one completes after every earlier one.
    stream.once('error', () => resolve());
    stream.write('', () => resolve());
  });

/**
 * Waits until stdout and stderr have handed everything written to the OS. Once a pipe is full Node
 * queues writes and finishes them asynchronously, and process.exit drops the queue. A stream that
 * takes nothing for `stallMs` is given up on, so a stuck reader cannot hold the process for ever.
 */
export async function flushOutput(stallMs = FLUSH_STALL_MS): Promise<void> {
  const streams = [process.stdout, process.stderr];
  const pending = () => streams.reduce((sum, s) => sum + s.writableLength, 0);
  let stalled: NodeJS.Timeout | undefined;
  const givenUp = new Promise<void>((resolve) => {
    let last = pending();
    stalled = setInterval(() => {
      const now = pending();
      if (now >= last) resolve();
      last = now;
    }, stallMs);
  });
  try {
    await Promise.race([Promise.all(streams.map(drained)), givenUp]);
  } finally {
    clearInterval(stalled);
  }
}

export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

/** "+1.25s" from a start time. */
export const relative = (at: number, start: number): string => `+${formatDuration(Math.max(0, at - start))}`;

/** An etcdctl-style table with +---+ borders. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const format = (cells: string[]) => `| ${widths.map((w, i) => (cells[i] ?? '').padEnd(w)).join(' | ')} |`;
  return [line, format(headers), line, ...rows.map(format), line].join('\n');
}

/** Cuts a line to `width` characters, marking the cut. */
export const clip = (line: string, width = Infinity): string => (line.length <= width ? line : `${line.slice(0, Math.max(0, width - 1))}…`);

/** Timeline lines with times relative to the first entry (or `start`). */
export function renderTimeline(timeline: TimelineEntry[], start?: number, maxWidth?: number): string {
  const t0 = start ?? (timeline[0] ? Date.parse(timeline[0].at) : 0);
  const width = Math.max(0, ...timeline.map((e) => e.step.length));
  return timeline.map((e) => clip(`  ${relative(Date.parse(e.at), t0).padStart(8)}  ${e.step.padEnd(width)}  ${e.detail}`.trimEnd(), maxWidth)).join('\n');
}

export function renderResult(raw: CliResult): string {
  // Names and messages carry the cluster's text: escaped, each line below stays one line.
  const result = escapeControlsIn(raw);
  const { name, memberId, reportedAs } = result.target;
  const who = name ? `${name} (${memberId})` : reportedAs !== undefined ? `${reportedAs} (no member)` : memberId;
  return [
    `outcome:     ${result.outcome}`,
    `reason:      ${result.reason}`,
    `target:      ${who} in cluster ${result.clusterId}`,
    `message:     ${result.message}`,
    `leader move: ${result.leaderMove}`,
    `incident:    ${result.incidentId}`,
    'timeline:',
    renderTimeline(result.timeline),
  ].join('\n');
}

export function printResult(result: CliResult, json: boolean): number {
  if (json) printJson(result);
  else process.stdout.write(`${renderResult(result)}\n`);
  return exitCodeOf(result.outcome, result.reason);
}
