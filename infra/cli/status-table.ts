// The status table for people, pure: from incidents, the fleet's pauses, now and a width to lines.
// What needs a person comes first; ages and next steps in short relative words; columns aligned
// and cut with … to the terminal's width instead of wrapping. The I/O is status-source.ts's.
import { stateReading } from '../../functions/core/incident/index.ts';
import type { Decision, ReasonCode } from '../../functions/core/common/index.ts';
import type { FleetPauses } from '../../functions/core/fleet/index.ts';
import type { HygieneRecord } from '../../functions/core/hygiene/index.ts';
import type { MaintenanceRecord, MaintenanceStepDone } from '../../functions/core/maintenance/index.ts';
import { targetKeyOf } from '../../functions/core/view/index.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';
import { formatAge } from './duration.ts';
import { PROGRAM } from './args.ts';
import { escapeControls } from './control-chars.ts';
import { clip } from './output.ts';

/** The fields of an incident the table reads. */
export type StatusIncident = Pick<Incident, 'incidentId' | 'clusterId' | 'target' | 'state' | 'openedAt' | 'updatedAt' | 'attempt'> &
  Partial<Pick<Incident, 'memberName' | 'memberId' | 'lastDecision'>>;

/** What the replacement check, or watch of the control plane, said that a person must act on (its journal line). */
export type ReplacementSaid = Extract<ReasonCode, 'REPLACEMENT_OVERDUE' | 'REPLACEMENT_CHECKS_ENDED' | 'REPLACEMENT_HELD'>;

export interface StatusEntry {
  incident: StatusIncident;
  /** When the next step is due: the local scheduler's timer; without one, the last retry's time. */
  nextDueAt?: number;
  /** Set once the replacement check said overdue, or that its checks ended, and while the control plane holds the replacement. */
  replacementSaid?: ReplacementSaid;
}

/** A cluster's leader-hygiene record, as far as status shows it. */
export interface ClusterHygiene {
  clusterId: string;
  record: Pick<HygieneRecord, 'lastJudged' | 'moves' | 'lastAlert'>;
}

/** A cluster's maintenance record, as far as status shows it: the run in flight and the last one ended. */
export interface ClusterMaintenance {
  clusterId: string;
  record: Pick<MaintenanceRecord, 'run' | 'lastRun'>;
}

export interface StatusTableInput {
  entries: readonly StatusEntry[];
  pauses: FleetPauses;
  /** The clusters with a leader-hygiene record; none, no lines. */
  hygiene?: readonly ClusterHygiene[];
  /** The clusters with a maintenance record; only those with a run in flight or ended get a line. */
  maintenance?: readonly ClusterMaintenance[];
  now: number;
  /** Terminal columns; absent (not a terminal) cuts nothing. */
  width?: number;
  /** Incidents that ended longer ago than this are left out; absent shows every one (--all). */
  recentMs?: number;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** "in 42s", "now", "3m10s late" (a step past due: is anything running the state?), or "-". */
export function formatDue(at: number | undefined, now: number): string {
  if (at === undefined) return '-';
  const ahead = at - now;
  if (Math.abs(ahead) < SECOND) return 'now';
  return ahead > 0 ? `in ${formatAge(ahead)}` : `${formatAge(-ahead)} late`;
}

/** A window in its largest whole unit: 24h, 90m. */
const windowText = (ms: number): string => (ms % HOUR === 0 ? `${ms / HOUR}h` : ms % MINUTE === 0 ? `${ms / MINUTE}m` : formatAge(ms));

const ended = (e: StatusEntry) => e.incident.state !== 'open' && e.incident.state !== 'awaiting-replacement';

/**
 * 0 needs a person (blocked and failed say so, as does a replacement overdue, held or no longer checked),
 * 1 open, 2 awaiting its replacement, 3 ended with nothing left to do.
 */
export function attentionRank(e: StatusEntry): number {
  // A replacement said overdue or held needs a person as a block does.
  return e.replacementSaid !== undefined ? 0 : stateReading(e.incident.state).attention;
}

const byAttention = (a: StatusEntry, b: StatusEntry) =>
  attentionRank(a) - attentionRank(b) || a.incident.openedAt - b.incident.openedAt || (a.incident.incidentId < b.incident.incidentId ? -1 : 1);

/** The member's name once resolved; before, what the report named. */
function targetOf(i: StatusIncident): string {
  const name = i.memberName || i.target.memberName;
  if (name) return name;
  return targetKeyOf(i.target) || i.memberId || '-';
}

/** When the entry's next step is due; none once it ended. */
export function nextDue(e: StatusEntry): number | undefined {
  if (ended(e)) return undefined;
  const last: Decision | undefined = e.incident.lastDecision;
  return e.nextDueAt ?? (e.incident.state === 'open' && last?.kind === 'retry' ? last.at : undefined);
}

interface Column {
  header: string;
  cell(e: StatusEntry, now: number): string;
  /** Set on the columns that give way to a narrow terminal: the narrowest they are cut to. */
  min?: number;
}

const columns: Column[] = [
  { header: 'ID', cell: (e) => e.incident.incidentId.slice(0, 8) },
  { header: 'CLUSTER', cell: (e) => e.incident.clusterId },
  { header: 'TARGET', cell: (e) => targetOf(e.incident), min: 8 },
  { header: 'STATE', cell: (e) => e.incident.state },
  { header: 'REASON', cell: (e) => e.replacementSaid ?? e.incident.lastDecision?.reason ?? '-', min: 10 },
  { header: 'AGE', cell: (e, now) => formatAge(now - e.incident.openedAt) },
  { header: 'NEXT', cell: (e, now) => formatDue(nextDue(e), now) },
  { header: 'ATTEMPT', cell: (e) => String(e.incident.attempt) },
];

const GAP = '  ';

/** Natural widths, then the wider of reason and target cut a character at a time until the line fits. */
function widthsFor(rows: string[][], width: number): number[] {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => r[i]!.length)));
  let excess = widths.reduce((sum, w) => sum + w, 0) + GAP.length * (columns.length - 1) - width;
  const shrinking = columns.flatMap((c, i) => (c.min === undefined ? [] : [{ i, min: c.min }]));
  while (excess > 0) {
    const widest = shrinking.filter((s) => widths[s.i]! > s.min).sort((a, b) => widths[b.i]! - widths[a.i]!)[0];
    if (!widest) break;
    widths[widest.i]! -= 1;
    excess -= 1;
  }
  return widths;
}

const formatRow = (cells: string[], widths: number[]) =>
  cells
    .map((cell, i) => clip(cell, widths[i]).padEnd(widths[i]!))
    .join(GAP)
    .trimEnd();

/** The pauses, as pause wrote them: who, since when, why, and how to lift each. */
export function pauseLines(pauses: FleetPauses): string[] {
  const iso = (at: number) => new Date(at).toISOString();
  return [
    ...(pauses.fleet ? [`paused fleet-wide by ${pauses.fleet.by} since ${iso(pauses.fleet.at)}: ${pauses.fleet.why} (${PROGRAM} resume)`] : []),
    ...Object.entries(pauses.clusters ?? {}).map(
      ([id, p]) => `cluster ${id} paused by ${p.by} since ${iso(p.at)}: ${p.why} (${PROGRAM} resume --cluster ${id})`,
    ),
  ];
}

interface StormSaid {
  count: number;
  threshold: number;
  registered: number;
  liftsAt: number;
}

const isStormSaid = (value: unknown): value is StormSaid =>
  typeof value === 'object' &&
  value !== null &&
  ['count', 'threshold', 'registered', 'liftsAt'].every((k) => typeof (value as Record<string, unknown>)[k] === 'number');

/**
 * The storm hold, as the deferred incidents' last decisions say it: the store keeps the openings,
 * not the policy that judges them, so the figures are those of the newest FLEET_STORM decision.
 */
export function stormLine(entries: readonly StatusEntry[], now: number): string | undefined {
  const deferred = entries.filter(
    (e) => e.incident.state === 'open' && e.incident.lastDecision?.kind === 'retry' && e.incident.lastDecision.reason === 'FLEET_STORM',
  );
  if (deferred.length === 0) return undefined;
  const storms = deferred.map((e) => e.incident.lastDecision?.evidence.storm).filter(isStormSaid);
  const storm = storms.sort((a, b) => b.liftsAt - a.liftsAt)[0];
  const held = `storm: ${deferred.length} incident${deferred.length === 1 ? '' : 's'} deferred (FLEET_STORM)`;
  if (!storm) return `${held} (${PROGRAM} resume --storm)`;
  const lifts = storm.liftsAt > now ? `lifts in ${formatAge(storm.liftsAt - now)}` : 'lifts at their next look';
  return `${held}, ${storm.count} clusters failed within the window, over ${storm.threshold} of ${storm.registered} registered; ${lifts} if no other cluster fails (${PROGRAM} resume --storm)`;
}

/** The newest move and when it last changed: its end, else its claim, else its asking. */
function lastMoveOf(record: ClusterHygiene['record']) {
  const move = record.moves.at(-1);
  return move && { ...move, changedAt: move.endedAt ?? move.claimedAt ?? move.at };
}

const byClusterId = <T extends { clusterId: string }>(records: readonly T[]): T[] =>
  [...records].sort((a, b) => (a.clusterId < b.clusterId ? -1 : a.clusterId > b.clusterId ? 1 : 0));

/**
 * One line a cluster, its cells aligned: the last judgement's reason and how long ago, the last
 * move (members by id, as the record keeps them) with its state and how long ago.
 */
export function hygieneLines(hygiene: readonly ClusterHygiene[], now: number): string[] {
  const rows = byClusterId(hygiene).map(({ clusterId, record }) => {
    const judged = record.lastJudged ? `${record.lastJudged.reason} ${formatAge(now - record.lastJudged.at)} ago` : 'not judged yet';
    const move = lastMoveOf(record);
    const moved = move ? `last move ${move.from} → ${move.to} ${move.state} ${formatAge(now - move.changedAt)} ago` : '';
    return [clusterId, judged, moved].map(escapeControls);
  });
  const widths = [0, 1].map((i) => Math.max(0, ...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `leader hygiene${GAP}${r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell)).join(GAP)}`.trimEnd());
}

/** The clusters with a maintenance run in flight or ended, by id: those status says anything of. */
export const withRuns = (maintenance: readonly ClusterMaintenance[]): ClusterMaintenance[] =>
  byClusterId(maintenance.filter(({ record }) => record.run || record.lastRun));

/** The steps a run journaled, as "3 steps done, 1 failed". */
function stepsSaid(done: readonly MaintenanceStepDone[]): string {
  const ok = done.filter((d) => d.outcome === 'done').length;
  const failed = done.length - ok;
  return `${ok} step${ok === 1 ? '' : 's'} done${failed > 0 ? `, ${failed} failed` : ''}`;
}

/**
 * One line a cluster with a maintenance run in flight (why it started, the steps done, the one
 * running now) or ended (how, why, how long ago), its cells aligned.
 */
export function maintenanceLines(maintenance: readonly ClusterMaintenance[], now: number): string[] {
  const rows = withRuns(maintenance).map(({ clusterId, record }) => {
    const { run, lastRun } = record;
    const said = run
      ? `running (${run.reason}) since ${formatAge(now - run.startedAt)} ago: ${stepsSaid(run.done)}${run.claim ? `, ${run.claim.key} now` : ''}`
      : `last run ${lastRun!.outcome} (${lastRun!.endReason}) ${formatAge(now - lastRun!.endedAt)} ago: ${stepsSaid(lastRun!.done)}`;
    return [clusterId, said].map(escapeControls);
  });
  const width = Math.max(0, ...rows.map((r) => r[0]!.length));
  return rows.map(([cluster, said]) => `maintenance${GAP}${cluster!.padEnd(width)}${GAP}${said}`.trimEnd());
}

/** What the maintenance lines say, without the ages: for the watch key. */
const maintenanceSaid = (maintenance: readonly ClusterMaintenance[]) =>
  withRuns(maintenance).map(({ clusterId, record: { run, lastRun } }) => [
    clusterId,
    run ? [run.runId, run.done.length, run.claim?.key ?? null] : null,
    lastRun ? [lastRun.runId, lastRun.outcome] : null,
  ]);

/** What the hygiene lines say, without the ages: for the watch key. */
const hygieneSaid = (hygiene: readonly ClusterHygiene[]) =>
  byClusterId(hygiene).map(({ clusterId, record }) => {
    const move = lastMoveOf(record);
    return [clusterId, record.lastJudged?.reason ?? null, record.lastJudged?.at ?? null, move ? [move.moveId, move.state] : null];
  });

const shown = (input: StatusTableInput) =>
  input.entries.filter((e) => !ended(e) || input.recentMs === undefined || input.now - e.incident.updatedAt <= input.recentMs);

/** The lines to print: the fleet's holds, the table (or that there is none), what the window left out. */
export function renderStatusTable(input: StatusTableInput): string[] {
  const width = input.width ?? Number.POSITIVE_INFINITY;
  const visible = shown(input).sort(byAttention);
  const hidden = input.entries.length - visible.length;
  const storm = stormLine(input.entries, input.now);
  const above = [...pauseLines(input.pauses), ...(storm ? [storm] : [])];
  const lines: string[] = [
    ...above.map(escapeControls),
    ...hygieneLines(input.hygiene ?? [], input.now),
    ...maintenanceLines(input.maintenance ?? [], input.now),
  ];
  if (visible.length === 0) {
    lines.push(hidden === 0 ? 'no incidents' : `no incidents open or ended in the last ${windowText(input.recentMs ?? 0)}`);
  } else {
    // What the store holds came from outside (reports, member names): escaped, so each row stays one line.
    const rows = visible.map((e) => columns.map((c) => escapeControls(c.cell(e, input.now))));
    const widths = widthsFor(rows, width);
    lines.push(
      formatRow(
        columns.map((c) => c.header),
        widths,
      ),
      ...rows.map((r) => formatRow(r, widths)),
    );
  }
  if (hidden > 0) {
    const one = hidden === 1;
    lines.push(
      `${hidden} incident${one ? '' : 's'} ended before the last ${windowText(input.recentMs ?? 0)} ${one ? 'is' : 'are'} not shown (--all shows ${one ? 'it' : 'them'})`,
    );
  }
  return lines.map((l) => clip(l, width));
}

/** Changes when what the table says changes, not as ages and waits tick: --watch off a terminal prints only then. */
export function statusChangeKey(input: StatusTableInput): string {
  const rows = shown(input)
    .sort(byAttention)
    .map((e) => [
      e.incident.incidentId,
      e.incident.state,
      e.replacementSaid ?? e.incident.lastDecision?.reason ?? null,
      e.incident.attempt,
      nextDue(e) ?? null,
      targetOf(e.incident),
    ]);
  return JSON.stringify({
    rows,
    pauses: pauseLines(input.pauses),
    storm: stormLine(input.entries, 0) !== undefined,
    hygiene: hygieneSaid(input.hygiene ?? []),
    maintenance: maintenanceSaid(input.maintenance ?? []),
  });
}
