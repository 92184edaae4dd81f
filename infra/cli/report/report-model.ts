// The incident report's page as data: an incident, its journal and its kept views folded into what
// the page draws (the header, the steps as bars, the marks, one lane per member, the figures). Pure:
// it reads no file and no clock, so the same incident always makes the same page.
import {
  stateReading,
  isDecisionLine,
  isLine,
  journalSteps,
  type JournalEntry,
  type MemberSeen,
  journalWords,
} from '../../../functions/core/incident/index.ts';
import { isReasonCode, waitingReasons, NO_LEADER, type PathName, type Reachability } from '../../../functions/core/common/index.ts';
import type { MaintenanceRecord, MaintenanceStepDone } from '../../../functions/core/maintenance/index.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';

/** A row of the timeline a bar is drawn on. */
export type BarRow = 'probe' | 'wait' | 'action';
export type BarKind = 'probe' | 'wait' | 'retry' | 'move-leader' | 'snapshot' | 'removal' | 'election' | 'replacement' | 'maintenance';

export interface Bar {
  kind: BarKind;
  row: BarRow;
  /** What the bar is, in a few words (a reason code for a wait). */
  label: string;
  from: number;
  to: number;
}

export type MarkKind = 'decision' | 'leader-move' | 'snapshot' | 'removal' | 'new-leader' | 'replacement-joined';

export interface Mark {
  kind: MarkKind;
  at: number;
  /** Short, drawn beside the mark. */
  label: string;
  /** The whole line, for a tooltip. */
  detail: string;
  /** For decisions: whether it ended the looking (approve, block, close, failed) rather than retried. */
  final?: boolean;
}

/** What one probe saw of one member. */
export interface LaneProbe {
  at: number;
  reachable: boolean;
  /** The path that answered, when one did. */
  path?: PathName;
  /** How each path that did not answer failed. */
  failed: { path: PathName; reachability: Reachability }[];
  /** Whom the member named leader, when it answered with a status ("none" when it saw no leader). */
  leader?: string;
  term?: number;
}

export interface Lane {
  memberId: string;
  name: string;
  isTarget: boolean;
  probes: LaneProbe[];
}

export interface Figure {
  label: string;
  /** Undefined when it did not happen. */
  ms?: number;
}

export interface EvidenceItem {
  term: string;
  /** Plain text, or JSON for a nested value (indented when long). */
  value: string;
  nested: boolean;
}

export interface ReportModel {
  incidentId: string;
  clusterId: string;
  target: { key: string; name?: string; memberId?: string };
  /** The incident's state, with a close said as what it was (recovered, withdrawn). */
  state: string;
  storedState: Incident['state'];
  reason?: string;
  message?: string;
  evidence: EvidenceItem[];
  reportedBy: { source: string; reason: string; observedAt?: string };
  attempt: number;
  /** The time axis: the event (the incident opened) to the last thing known of it. */
  start: number;
  end: number;
  bars: Bar[];
  grace?: { from: number; to: number };
  /** In time order. */
  marks: Mark[];
  lanes: Lane[];
  /** How many probes the journal says were made; the lanes draw every one. */
  probes: number;
  figures: Figure[];
  /** The journal, each line in words. */
  lines: { at: number; step: string; words: string }[];
  /** The maintenance run the incident lived through (a NOSPACE it waited on), its steps in order. */
  maintenance?: {
    runId: string;
    state: string;
    reason: string;
    message?: string;
    steps: { at: number; tookMs: number; step: string; outcome: string; words: string }[];
  };
}

/** A maintenance run of the incident's cluster, in flight (no ending yet) or ended. */
export interface ReportMaintenanceRun {
  runId: string;
  reason: string;
  startedAt: number;
  done: readonly MaintenanceStepDone[];
  ending?: { outcome: string; endReason: string; message: string; endedAt: number };
}

export interface ReportInput {
  incident: Incident;
  journal: readonly JournalEntry[];
  /** The cluster's maintenance run that overlaps the incident, if any. */
  maintenance?: ReportMaintenanceRun;
}

const finalKinds = new Set(['approve', 'block', 'close', 'failed']);
const kindOf = (step: string): string => step.slice(step.indexOf(':') + 1);
const isWaiting = (reason: string): boolean => isReasonCode(reason) && waitingReasons.includes(reason);
const record = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** The outcome's reason, sentence and evidence: an ending's own, else the approval behind a removal, else the last decision. */
function outcomeOf(incident: Incident, journal: readonly JournalEntry[]): { reason?: string; message?: string; evidence: Record<string, unknown> } {
  const result = record(incident.result);
  if (result && typeof result.reason === 'string' && incident.state !== 'awaiting-replacement' && incident.state !== 'completed') {
    return { reason: result.reason, ...(typeof result.message === 'string' ? { message: result.message } : {}), evidence: record(result.evidence) ?? {} };
  }
  const last = incident.lastDecision;
  const removed = stateReading(incident.state).removed;
  if (removed) {
    // A resume approves as RUNTIME_RESUMED, which says nothing about why: the approval before it does.
    const approval = journal
      .filter(isDecisionLine)
      .filter((e) => kindOf(e.step) === 'approve' && e.detail.reason !== 'RUNTIME_RESUMED')
      .at(-1);
    if (approval) {
      const evidence = last?.reason === approval.detail.reason ? last.evidence : {};
      return { reason: approval.detail.reason, message: approval.detail.message, evidence };
    }
  }
  return last ? { reason: last.reason, message: last.message, evidence: last.evidence } : { evidence: {} };
}

function evidenceItems(evidence: Record<string, unknown>): EvidenceItem[] {
  return Object.entries(evidence).map(([term, value]) => {
    if (value === null || typeof value !== 'object')
      return { term, value: typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)), nested: false };
    // Short values stay on one line; longer ones are indented to be read.
    const json = JSON.stringify(value);
    return { term, value: json.length > 100 ? JSON.stringify(value, null, 2) : json, nested: true };
  });
}

function graceOf(incident: Incident, evidence: Record<string, unknown>): { from: number; to: number } | undefined {
  const grace = record(evidence.grace) ?? record(record(incident.lastDecision?.evidence)?.grace);
  return grace && typeof grace.since === 'number' && typeof grace.endsAt === 'number' ? { from: grace.since, to: grace.endsAt } : undefined;
}

/** Probes, waits and actions as bars, read from the journal in order. */
function barsOf(journal: readonly JournalEntry[], start: number, end: number): Bar[] {
  const bars: Bar[] = [];
  let previous = start;
  let due: number | undefined;
  let approvedAt: number | undefined;
  let removedAt: number | undefined;
  let askedAt: number | undefined;
  for (const e of journal) {
    if (isLine(e, journalSteps.probed))
      bars.push({ kind: 'probe', row: 'probe', label: 'probe', from: Math.min(e.at, Math.max(previous, due ?? previous)), to: e.at });
    else if (isLine(e, journalSteps.retryScheduled)) {
      const at = Date.parse(e.detail.at);
      if (Number.isFinite(at) && at > e.at)
        bars.push({ kind: isWaiting(e.detail.reason) ? 'wait' : 'retry', row: 'wait', label: e.detail.reason, from: e.at, to: at });
      due = at;
    } else if (isLine(e, journalSteps.leaderMoved))
      bars.push({ kind: 'move-leader', row: 'action', label: 'move leader', from: e.at - e.detail.tookMs, to: e.at });
    else if (isLine(e, journalSteps.snapshotTaken)) bars.push({ kind: 'snapshot', row: 'action', label: 'snapshot', from: e.at - e.detail.tookMs, to: e.at });
    else if (isDecisionLine(e) && kindOf(e.step) === 'approve') approvedAt = e.at;
    else if (isLine(e, journalSteps.memberRemoved) && removedAt === undefined) {
      removedAt = e.at;
      if (approvedAt !== undefined) bars.push({ kind: 'removal', row: 'action', label: 'remove', from: approvedAt, to: e.at });
    } else if (isLine(e, journalSteps.leaderElected) && removedAt !== undefined)
      bars.push({ kind: 'election', row: 'action', label: 'election', from: removedAt, to: e.at });
    else if (isLine(e, journalSteps.actuatorCalled)) askedAt = e.at;
    else if (isLine(e, journalSteps.replacementChecked) && e.detail.reason === 'REPLACEMENT_JOINED' && askedAt !== undefined) {
      bars.push({ kind: 'replacement', row: 'action', label: 'replacement', from: askedAt, to: e.at });
      askedAt = undefined;
    }
    previous = e.at;
  }
  // Still awaited at the end of what is known.
  if (askedAt !== undefined && end > askedAt) bars.push({ kind: 'replacement', row: 'action', label: 'awaiting replacement', from: askedAt, to: end });
  return bars;
}

function marksOf(journal: readonly JournalEntry[]): Mark[] {
  const marks: Mark[] = [];
  const firstOf = new Set<MarkKind>();
  const once = (mark: Mark) => {
    if (firstOf.has(mark.kind)) return;
    firstOf.add(mark.kind);
    marks.push(mark);
  };
  for (const e of journal) {
    if (isDecisionLine(e)) {
      const kind = kindOf(e.step);
      marks.push({
        kind: 'decision',
        at: e.at,
        label: e.detail.reason,
        detail: `${e.step} ${e.detail.reason}: ${e.detail.message}`,
        final: finalKinds.has(kind),
      });
    } else if (isLine(e, journalSteps.leaderMoved)) once({ kind: 'leader-move', at: e.at, label: 'leader moved', detail: e.detail.message });
    else if (isLine(e, journalSteps.snapshotTaken))
      once({ kind: 'snapshot', at: e.at, label: 'snapshot', detail: `${e.detail.location} through ${e.detail.via}` });
    else if (isLine(e, journalSteps.memberRemoved))
      once({
        kind: 'removal',
        at: e.at,
        label: 'removed',
        detail: 'via' in e.detail ? `removed through ${e.detail.via}` : `${e.detail.absentFromList} left the member list`,
      });
    else if (isLine(e, journalSteps.leaderElected)) {
      const { name, id, term } = e.detail;
      once({
        kind: 'new-leader',
        at: e.at,
        label: `${name || id} leads`,
        detail: `${name || id} (${id}) leads${term === undefined ? '' : ` at term ${term}`}`,
      });
    } else if (isLine(e, journalSteps.replacementChecked) && e.detail.reason === 'REPLACEMENT_JOINED')
      once({ kind: 'replacement-joined', at: e.at, label: 'replacement joined', detail: e.detail.message });
  }
  // Stable: lines written at the same millisecond keep the journal's order.
  return marks
    .map((m, i) => ({ m, i }))
    .sort((a, b) => a.m.at - b.m.at || a.i - b.i)
    .map(({ m }) => m);
}

/** A lane probe from what a probe saw of one member; `names` names the members it could name leader. */
function laneProbe(at: number, seen: MemberSeen, names: ReadonlyMap<string, string>): LaneProbe {
  const probe: LaneProbe = { at, reachable: seen.path !== undefined, failed: seen.failed ?? [] };
  if (seen.path) probe.path = seen.path;
  if (seen.leaderId !== undefined) probe.leader = seen.leaderId === NO_LEADER ? 'none' : (names.get(seen.leaderId) ?? seen.leaderId);
  if (seen.term !== undefined) probe.term = seen.term;
  return probe;
}

/** What each probe saw, in order: the probe lines of the journal keep every member of every probe. */
const probesSeen = (journal: readonly JournalEntry[]): { at: number; seen: MemberSeen[] }[] =>
  journal.flatMap((e) => (isLine(e, journalSteps.probed) ? [{ at: e.at, seen: e.detail.seen }] : []));

/** One lane per member any probe saw, the target's first, then in the order first seen. */
function lanesOf(probes: readonly { at: number; seen: readonly MemberSeen[] }[], targetId: string | undefined): Lane[] {
  const lanes = new Map<string, Lane>();
  for (const { at, seen } of probes) {
    const names = new Map(seen.map((m) => [m.memberId, m.name || m.memberId]));
    for (const m of seen) {
      const lane = lanes.get(m.memberId) ?? { memberId: m.memberId, name: m.name || m.memberId, isTarget: m.memberId === targetId, probes: [] };
      if (m.name) lane.name = m.name;
      lane.probes.push(laneProbe(at, m, names));
      lanes.set(m.memberId, lane);
    }
  }
  return [...lanes.values()].sort((a, b) => Number(b.isTarget) - Number(a.isTarget));
}

function figuresOf(start: number, marks: readonly Mark[]): Figure[] {
  const after = (mark: Mark | undefined): Pick<Figure, 'ms'> => (mark ? { ms: Math.max(0, mark.at - start) } : {});
  return [
    { label: 'event → decision', ...after(marks.find((m) => m.kind === 'decision' && m.final)) },
    { label: 'event → removal', ...after(marks.find((m) => m.kind === 'removal')) },
    { label: 'event → new leader', ...after(marks.find((m) => m.kind === 'new-leader')) },
    { label: 'event → replacement joined', ...after(marks.find((m) => m.kind === 'replacement-joined')) },
  ];
}

/**
 * The run of the cluster's maintenance record that overlaps the incident, in flight or the last
 * ended: the one a NOSPACE it waited on was cleared by. The record keeps those two only.
 */
export function maintenanceRunOf(record: Pick<MaintenanceRecord, 'run' | 'lastRun'> | undefined, incident: Incident): ReportMaintenanceRun | undefined {
  const until = incident.state === 'open' ? Number.POSITIVE_INFINITY : incident.updatedAt;
  const { run, lastRun } = record ?? {};
  if (run && run.startedAt <= until) return { runId: run.runId, reason: run.reason, startedAt: run.startedAt, done: run.done };
  if (lastRun && lastRun.startedAt <= until && lastRun.endedAt >= incident.openedAt)
    return {
      runId: lastRun.runId,
      reason: lastRun.reason,
      startedAt: lastRun.startedAt,
      done: lastRun.done,
      ending: { outcome: lastRun.outcome, endReason: lastRun.endReason, message: lastRun.message, endedAt: lastRun.endedAt },
    };
  return undefined;
}

/** The step's key in words: its kind, and the member by name where the lanes know it. */
const stepWords = (key: string, names: ReadonlyMap<string, string>): string => {
  const [kind, member] = key.split(':');
  return member ? `${kind} ${names.get(member) ?? member}` : kind!;
};

function maintenanceOf(run: ReportMaintenanceRun | undefined, names: ReadonlyMap<string, string>): Pick<ReportModel, 'maintenance'> {
  if (!run) return {};
  return {
    maintenance: {
      runId: run.runId,
      state: run.ending?.outcome ?? 'running',
      reason: run.ending?.endReason ?? run.reason,
      ...(run.ending ? { message: run.ending.message } : {}),
      steps: run.done.map((d) => ({ at: d.at, tookMs: d.tookMs, step: stepWords(d.key, names), outcome: d.outcome, words: d.message })),
    },
  };
}

/** Each step of the run as a bar on the action row, where the incident's time axis holds it. */
const maintenanceBars = (run: ReportMaintenanceRun | undefined, names: ReadonlyMap<string, string>, start: number, end: number): Bar[] =>
  (run?.done ?? [])
    .filter((d) => d.at + d.tookMs >= start && d.at <= end)
    .map((d) => ({
      kind: 'maintenance' as const,
      row: 'action' as const,
      label: stepWords(d.key, names),
      from: Math.max(start, d.at),
      to: Math.min(end, d.at + Math.max(1, d.tookMs)),
    }));

export function reportModel({ incident, journal, maintenance }: ReportInput): ReportModel {
  const opened = journal.find((e) => isLine(e, journalSteps.incidentOpened));
  const start = incident.openedAt;
  // A reduce, not Math.max(...): a long journal would pass more arguments than a call takes.
  const last = (a: number, b: number) => Math.max(a, b);
  const end = [journal.map((e) => e.at), incident.views.map((v) => v.at), incident.state === 'open' ? [] : [incident.updatedAt]].flat().reduce(last, start);
  const outcome = outcomeOf(incident, journal);
  const marks = marksOf(journal);
  const grace = graceOf(incident, outcome.evidence);
  const seenByProbe = probesSeen(journal);
  const state = stateReading(incident.state, outcome.reason).word;
  const lanes = lanesOf(seenByProbe, incident.memberId);
  // Members by name where the lanes know them: the maintenance steps say whom they acted on.
  const names = new Map(lanes.map((l) => [l.memberId, l.name]));
  return {
    incidentId: incident.incidentId,
    clusterId: incident.clusterId,
    target: {
      key: incident.targetKey,
      ...(incident.memberName ? { name: incident.memberName } : {}),
      ...(incident.memberId ? { memberId: incident.memberId } : {}),
    },
    state,
    storedState: incident.state,
    ...(outcome.reason ? { reason: outcome.reason } : {}),
    ...(outcome.message ? { message: outcome.message } : {}),
    evidence: evidenceItems(outcome.evidence),
    reportedBy:
      opened && isLine(opened, journalSteps.incidentOpened)
        ? { source: opened.detail.source, reason: opened.detail.reason, observedAt: opened.detail.observedAt }
        : { source: 'unknown', reason: incident.reason },
    attempt: incident.attempt,
    start,
    end: Math.max(end, start + 1),
    bars: [...barsOf(journal, start, end), ...maintenanceBars(maintenance, names, start, end)],
    ...(grace ? { grace } : {}),
    marks,
    lanes,
    probes: seenByProbe.length,
    figures: figuresOf(start, marks),
    lines: journal.map((e) => ({ at: e.at, step: e.step, words: journalWords(e) })),
    ...maintenanceOf(maintenance, names),
  };
}
