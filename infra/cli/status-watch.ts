// `status --watch`: the table read again every interval. On a terminal it is redrawn in place (the
// cursor home, each line rewritten and cleared to its end, the rest of the screen cleared; the
// cursor hidden meanwhile and shown again on exit), cut to the terminal's width and height so
// nothing wraps or scrolls. Off a terminal (a pipe, a file, a log) it prints a block, a line with
// the time and then the table, only when what the table says changed, not as ages tick.
// SIGINT and SIGTERM end it cleanly. It only reads. A read that fails once the first has not
// (a network blip to the table) is said, and tried again each interval: a person watching through
// an incident keeps the view; a first read that fails is the command's error, as without --watch.
import { PROGRAM } from './args.ts';
import { escapeControls } from './control-chars.ts';
import { formatDuration } from './duration.ts';
import { clip } from './output.ts';
import { untilSignal } from './signals.ts';
import type { StatusSnapshot, StatusSource } from './status-source.ts';

export interface Frame {
  lines: string[];
  /** Equal keys say the same thing (statusChangeKey): off a terminal, a frame with the last key is not printed. */
  key: string;
}

export interface WatchOptions {
  source: Pick<StatusSource, 'read' | 'where' | 'described'>;
  intervalMs: number;
  frame(snapshot: StatusSnapshot, now: number, width: number | undefined): Frame;
  out?: NodeJS.WriteStream;
  /** Where a failed read is said off a terminal. */
  err?: NodeJS.WritableStream;
  now?: () => number;
}

const CSI = '\x1b[';
const HIDE_CURSOR = `${CSI}?25l`;
const SHOW_CURSOR = `${CSI}?25h`;
const HOME = `${CSI}H`;
const CLEAR_LINE_END = `${CSI}K`;
const CLEAR_SCREEN_END = `${CSI}J`;

/** A frame for a terminal of `rows` lines: the last line stays free, so the screen never scrolls. */
export function fitHeight(lines: string[], rows: number | undefined): string[] {
  const room = Math.max(2, (rows ?? Number.POSITIVE_INFINITY) - 1);
  if (lines.length <= room) return lines;
  const kept = lines.slice(0, room - 1);
  return [...kept, `… ${lines.length - kept.length} more lines (a taller terminal shows them)`];
}

export async function watchStatus(options: WatchOptions): Promise<void> {
  const out = options.out ?? process.stdout;
  const err = options.err ?? process.stderr;
  const now = options.now ?? Date.now;
  const tty = out.isTTY === true;
  const stop = untilSignal();
  let stopped = false;
  let wake: () => void = () => undefined;
  void stop.promise.then(() => {
    stopped = true;
    wake();
  });
  // A reader gone (the pipe closed) ends the watch as a signal would.
  const gone = () => {
    stopped = true;
    wake();
  };
  out.on('error', gone);
  const redraw = () => wake();
  if (tty) {
    out.on('resize', redraw);
    out.write(`${HIDE_CURSOR}${CSI}2J${HOME}`);
  }
  let lastKey: string | undefined;
  let last: { snapshot: StatusSnapshot; at: number } | undefined;
  let failing: string | undefined;
  const every = formatDuration(options.intervalMs);
  const iso = (at: number) => new Date(at).toISOString();
  try {
    while (!stopped) {
      let problem: string | undefined;
      try {
        last = { snapshot: await options.source.read(), at: now() };
      } catch (error) {
        if (!last) throw error;
        const described = options.source.described(error);
        problem = escapeControls(described instanceof Error ? described.message : String(described)).split('\n')[0];
      }
      if (stopped) break;
      const at = now();
      const width = tty ? out.columns : undefined;
      const frame = options.frame(last.snapshot, at, width);
      if (tty) {
        const title = `every ${every}: ${options.source.where} at ${iso(at)} (ctrl-c quits)`;
        const stale = problem === undefined ? [] : [`could not read at ${iso(at)}: ${problem}; below, what was read at ${iso(last.at)}`];
        const lines = fitHeight(
          [title, ...stale, '', ...frame.lines].map((l) => clip(l, width)),
          out.rows,
        );
        out.write(`${HOME}${lines.map((l) => `${l}${CLEAR_LINE_END}`).join('\n')}${CLEAR_SCREEN_END}`);
      } else {
        if (problem !== undefined && problem !== failing)
          err.write(`${PROGRAM}: status could not read ${options.source.where} at ${iso(at)}: ${problem} (trying again every ${every})\n`);
        if (problem === undefined && failing !== undefined) err.write(`${PROGRAM}: status read ${options.source.where} again at ${iso(at)}\n`);
        if (problem === undefined && frame.key !== lastKey) out.write(`--- ${iso(at)}\n${frame.lines.join('\n')}\n`);
      }
      failing = problem;
      if (problem === undefined) lastKey = frame.key;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (stopped) wake();
      });
    }
  } finally {
    stop.dispose();
    out.off('error', gone);
    if (tty) {
      out.off('resize', redraw);
      out.write(`\n${SHOW_CURSOR}`);
    }
  }
}
