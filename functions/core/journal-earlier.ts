// How a stored journal line reads back. Lines this build writes carry fields; earlier builds wrote
// each line's detail as text ("REASON: message", a JSON string for the election and the move
// marker). The stores read every line through here, once, so a state file or table from before
// still resumes, and its timeline still shows; nothing past this reads text for facts.
import type { Decision } from './decision.ts';
import { isReasonCode } from './reason-table.ts';
import {
  isDecisionStep,
  isLine,
  isMoveMadeLine,
  isMoveMadeStep,
  isNamedStep,
  journalSteps,
  type DecisionNote,
  type Election,
  type JournalEntry,
  type JournalInput,
  type MoveMade,
} from './journal.ts';
import { currentPathName, currentView, type PathSpelling } from './path-name.ts';
import type { ClusterView } from './view.ts';

export interface StoredLine {
  at: number;
  step: string;
  /** As the store decoded it from JSON; undefined when the line had none. */
  detail: unknown;
  isStepMarker: boolean;
}

type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);
const knownStep = (step: string): boolean => isNamedStep(step) || isDecisionStep(step) || isMoveMadeStep(step);

export function readJournalLine(stored: StoredLine): JournalEntry {
  const { at, step, detail, isStepMarker } = stored;
  // Written by this build (or a later one that kept the shape): its fields, as written.
  if (isFields(detail) && knownStep(step)) return withCurrentPaths({ at, step, detail, isStepMarker } as JournalEntry);
  const upgraded = typeof detail === 'string' ? fromEarlierText(step, detail) : undefined;
  if (upgraded) return withCurrentPaths({ at, ...upgraded, isStepMarker } as JournalEntry);
  const said = typeof detail === 'string' ? detail : detail === undefined ? '' : JSON.stringify(detail);
  return { at, step, said, isStepMarker };
}

/**
 * The lines that name a path, under today's names: a resumed move says LeaderMoved, and puts its
 * views on the incident, from the marker an earlier build may have written with `exec` in it.
 */
function withCurrentPaths(entry: JournalEntry): JournalEntry {
  if (isLine(entry, journalSteps.leaderMoved)) return { ...entry, detail: { ...entry.detail, path: currentPathName(entry.detail.path) } };
  if (!isMoveMadeLine(entry)) return entry;
  const { views, moved } = entry.detail;
  const detail: MoveMade = { ...entry.detail };
  if (views) detail.views = views.map(currentView);
  if (moved) detail.moved = { ...moved, path: currentPathName(moved.path) };
  return { ...entry, detail };
}

/** The lines whose facts a later step reads (decisions, the election, the move marker), from their earlier text. */
function fromEarlierText(step: string, text: string): Omit<JournalInput, 'at'> | undefined {
  if (isDecisionStep(step)) {
    const note = earlierDecision(text);
    return note && { step, detail: note };
  }
  if (step === journalSteps.leaderElected) {
    const election = earlierElection(text);
    return election && { step, detail: election };
  }
  if (isMoveMadeStep(step)) {
    const made = earlierMoveMade(text);
    return made && { step, detail: made };
  }
  return undefined;
}

/** "REASON: message", as decisions were journaled. */
function earlierDecision(text: string): DecisionNote | undefined {
  const colon = text.indexOf(': ');
  const reason = colon > 0 ? text.slice(0, colon) : '';
  return isReasonCode(reason) ? { reason, message: text.slice(colon + 2) } : undefined;
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** `{"id", "name", "term", "afterRemovalMs"}`, as JSON text. */
function earlierElection(text: string): Election | undefined {
  const value = parsed(text);
  if (!isFields(value) || typeof value.id !== 'string') return undefined;
  return {
    id: value.id,
    name: typeof value.name === 'string' ? value.name : '',
    ...(typeof value.term === 'number' ? { term: value.term } : {}),
    ...(typeof value.afterRemovalMs === 'number' ? { afterRemovalMs: value.afterRemovalMs } : {}),
  };
}

/** `{decision, views, leaderMoved}` as JSON text, where leaderMoved held the outbox entries to say the move by. */
function earlierMoveMade(text: string): MoveMade | undefined {
  const value = parsed(text);
  if (!isFields(value) || !isFields(value.decision) || typeof value.decision.reason !== 'string') return undefined;
  const made: MoveMade = { decision: value.decision as unknown as Decision };
  if (Array.isArray(value.views)) made.views = value.views as ClusterView[];
  const moved = Array.isArray(value.leaderMoved) ? earlierMove(value.leaderMoved) : undefined;
  if (moved) made.moved = moved;
  return made;
}

function earlierMove(entries: unknown[]): MoveMade['moved'] {
  const event = entries
    .filter(isFields)
    .map((e) => e.event)
    .find((e): e is Fields => isFields(e) && e.detailType === 'LeaderMoved');
  const d = isFields(event?.detail) ? event.detail : undefined;
  if (!d || typeof d.from !== 'string' || typeof d.to !== 'string' || typeof d.path !== 'string') return undefined;
  const line = entries
    .filter(isFields)
    .map((e) => e.entry)
    .find((e): e is Fields => isFields(e) && e.step === journalSteps.leaderMoved);
  return {
    from: d.from,
    to: d.to,
    path: currentPathName(d.path as PathSpelling),
    tookMs: typeof d.tookMs === 'number' ? d.tookMs : 0,
    message: typeof line?.detail === 'string' ? line.detail : '',
    attempt: typeof d.attempt === 'number' ? d.attempt : 0,
    at: typeof d.at === 'string' ? Date.parse(d.at) : typeof line?.at === 'number' ? line.at : 0,
  };
}
