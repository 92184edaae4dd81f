// How much an outcome may say: its message, its evidence, and RemediationCompleted's timeline. The
// event schemas hold events to these limits, and every step's commit keeps what it says within them,
// so an event (and the incident that keeps its decision) stays bounded whatever the cluster said:
// a message naming every member and how each failed grew past the schema's 2,000 characters. Pure.
import { clipText, jsonSize } from './view-limits.ts';

/** A message, in characters (UTF-16 units), as the events' schema counts them. */
export const MAX_MESSAGE_CHARS = 2_000;
/** A decision's evidence, in bytes of JSON. */
export const MAX_EVIDENCE_BYTES = 16 * 1024;
/** RemediationCompleted's timeline: its first and last lines, the rest said as left out. */
export const MAX_TIMELINE_ENTRIES = 100;
/** One timeline line, in bytes of JSON. */
export const MAX_TIMELINE_DETAIL_BYTES = 512;

const ELLIPSIS = '…';

/** At most MAX_MESSAGE_CHARS; a cut ends in an ellipsis, and never splits a surrogate pair. */
export function clipMessage(message: string): string {
  if (message.length <= MAX_MESSAGE_CHARS) return message;
  let cut = MAX_MESSAGE_CHARS - ELLIPSIS.length;
  const last = message.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return message.slice(0, cut) + ELLIPSIS;
}

/**
 * Evidence within MAX_EVIDENCE_BYTES: its entries in order while they fit, and `omitted` naming
 * those that did not (the message still says what was decided and why).
 */
export function boundedEvidence(evidence: Record<string, unknown>): Record<string, unknown> {
  if (jsonSize(evidence) <= MAX_EVIDENCE_BYTES) return evidence;
  const keys = Object.keys(evidence);
  // Room for naming every key as omitted, whatever is kept.
  let room = MAX_EVIDENCE_BYTES - jsonSize({ omitted: keys });
  const kept: Record<string, unknown> = {};
  const omitted: string[] = [];
  for (const key of keys) {
    const size = jsonSize({ [key]: evidence[key] });
    if (size <= room) {
      kept[key] = evidence[key];
      room -= size;
    } else omitted.push(key);
  }
  return { ...kept, omitted };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A detail or decision with its `message` and `evidence` (where it has them) within the limits; anything else as it is. */
export function boundedSaid<T>(value: T): T {
  if (!isRecord(value)) return value;
  const { message, evidence } = value;
  const clipped = typeof message === 'string' && message.length > MAX_MESSAGE_CHARS;
  const bounded = isRecord(evidence) ? boundedEvidence(evidence) : evidence;
  if (!clipped && bounded === evidence) return value;
  return { ...value, ...(clipped ? { message: clipMessage(message) } : {}), ...(bounded === evidence ? {} : { evidence: bounded }) };
}

export interface TimelineLine {
  at: string;
  step: string;
  detail: string;
}

/** A timeline within the limits: the first lines and the last, one line saying how many went between. */
export function boundedTimeline<L extends TimelineLine>(lines: readonly L[]): TimelineLine[] {
  const clip = (line: TimelineLine): TimelineLine => ({ ...line, detail: clipText(line.detail, MAX_TIMELINE_DETAIL_BYTES) });
  if (lines.length <= MAX_TIMELINE_ENTRIES) return lines.map(clip);
  const head = Math.floor(MAX_TIMELINE_ENTRIES / 5);
  const tail = MAX_TIMELINE_ENTRIES - head - 1;
  const left = lines.length - head - tail;
  const gap = { at: lines[head]!.at, step: 'timeline-cut', detail: `${left} lines left out here; the journal keeps them all` };
  return [...lines.slice(0, head).map(clip), gap, ...lines.slice(-tail).map(clip)];
}
