// Progress on stderr while the pipeline runs: one line per bus event as it happens, with the time
// since the start, and a spinner between events when stderr is a terminal.
import type { EventEnvelope } from '../../events/catalogue.ts';
import type { ClusterView } from '../../functions/core/view/index.ts';
import { escapeControls } from './control-chars.ts';
import { formatDuration } from './duration.ts';
import { clip, relative } from './output.ts';

/** "2 of 3 members answered; leader etcd-1 agreed at term 2". */
export function describeView(view: ClusterView): string {
  const ids = view.identity?.ids ?? [];
  if (ids.length > 1)
    return `endpoints of ${ids.length} etcd clusters answered (cluster ids ${ids.join(', ')})${view.members.length === 0 ? '; no member list taken' : ''}`;
  const answered = view.members.filter((m) => m.reachable).length;
  const { leader } = view;
  const who =
    leader.consensus === 'agreed'
      ? `leader ${leader.name || leader.id} agreed${leader.term === undefined ? '' : ` at term ${leader.term}`}`
      : `leader ${leader.consensus}`;
  const unreachable = view.members.filter((m) => !m.reachable).map((m) => m.name || m.id);
  return `${answered} of ${view.members.length} members answered${unreachable.length > 0 ? ` (not ${unreachable.join(', ')})` : ''}; ${who}`;
}

/** The event's reason and message, or what it carries, in one line. */
export function describeEvent(event: EventEnvelope, now = Date.now()): string {
  switch (event.detailType) {
    case 'MemberUnhealthy': {
      const [[key, value] = ['', '']] = Object.entries(event.detail.target).filter(([, v]) => v !== undefined);
      return `${key} ${value}: ${event.detail.reason} (from ${event.detail.source})`;
    }
    case 'MembersProbed':
      return describeView(event.detail.view);
    case 'RetryRequested': {
      const wait = Date.parse(event.detail.retryAt) - now;
      const when = event.detail.reprobeNow ? 're-probe now' : `next look in ${formatDuration(Math.max(0, wait))}`;
      return `${event.detail.reason} (${when}): ${event.detail.message}`;
    }
    case 'RetryDue':
      return `attempt ${event.detail.attempt}: ${event.detail.reason}`;
    case 'LearnerCheckDue':
      return `learner check of ${event.detail.clusterId}`;
    case 'HygieneCheckDue':
      return `leader hygiene check of ${event.detail.clusterId}`;
    case 'MaintenanceDue':
      return `maintenance of ${event.detail.clusterId}: the next step (asked by ${event.detail.askedBy})`;
    case 'MaintenanceEnded':
      return `maintenance ${event.detail.outcome}, ${event.detail.reason}: ${event.detail.message}`;
    case 'LeaderDegraded':
    case 'HygieneMoveEnded':
    case 'LeaderHygieneAlert':
      return `${event.detail.reason}: ${event.detail.message}`;
    case 'LeaderMoved':
      return `leadership moved from ${event.detail.from} to ${event.detail.to} over ${event.detail.path} in ${event.detail.tookMs}ms`;
    case 'RemediationApproved':
      return `${event.detail.reason} (leader move: ${event.detail.leaderMove}): ${event.detail.message}`;
    case 'RemediationCompleted': {
      const { target, newLeader } = event.detail;
      return `${target.name || target.memberId} removed; ${newLeader.name || newLeader.id} leads now`;
    }
    case 'RemediationBlocked':
    case 'RemediationClosed':
    case 'RemediationFailed':
    case 'RemediationReplaced':
    case 'ReplacementOverdue':
    case 'LearnerRemoved':
      return `${event.detail.reason}: ${event.detail.message}`;
  }
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Progress {
  /** Prints a line of its own, e.g. a handler error. */
  note(text: string): void;
  stop(): void;
}

/**
 * Subscribes to the bus and prints each event. Spinner only on a TTY: piped stderr gets plain
 * lines that a log can keep.
 */
export function showProgress(
  subscribe: (observer: (event: EventEnvelope) => void) => () => void,
  options: {
    start: number;
    stream?: NodeJS.WriteStream;
    filter?: (event: EventEnvelope) => boolean;
    /** Off for a long-running service, whose stderr is a log even on a terminal. */
    spinner?: boolean;
    prefix?: (event: EventEnvelope) => string;
    /** Cut each line to this many characters. */
    maxWidth?: number;
    /** Rewrites each event's text, e.g. to shorten it for a narrow screen. */
    format?: (text: string) => string;
  },
): Progress {
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true && options.spinner !== false;
  let frame = 0;
  let lastEventAt = options.start;
  const clear = () => tty && stream.write('\r\x1b[2K');
  const line = (label: string, text: string) => {
    clear();
    // The text carries names and errors from outside: escaped, it stays this one line.
    stream.write(`${clip(`  ${relative(Date.now(), options.start).padStart(8)}  ${label.padEnd(20)} ${escapeControls(text)}`, options.maxWidth)}\n`);
  };
  const unsubscribe = subscribe((event) => {
    if (options.filter && !options.filter(event)) return;
    lastEventAt = Date.now();
    const text = describeEvent(event);
    line(event.detailType, `${options.prefix?.(event) ?? ''}${options.format ? options.format(text) : text}`);
  });
  const spinner = tty
    ? setInterval(() => {
        frame = (frame + 1) % FRAMES.length;
        stream.write(`\r\x1b[2K  ${FRAMES[frame]} waiting ${formatDuration(Date.now() - lastEventAt)} since the last event`);
      }, 100)
    : undefined;
  spinner?.unref();
  return {
    note: (text) => line('note', text),
    stop() {
      if (spinner) clearInterval(spinner);
      clear();
      unsubscribe();
    },
  };
}
