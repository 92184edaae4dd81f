// `status`: what a state file or a deployed stack's table holds: the incidents as a table for
// people (once, or redrawn with --watch), one incident's journal as a timeline, or the dead letters
// (inputs refused at the edge, with why).
import { timelineOf } from '../../functions/core/incident/index.ts';
import { targetKeyOf } from '../../functions/core/view/index.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';
import { durationFlag, parseFlags, PROGRAM, UsageError } from './args.ts';
import { escapeControlsIn } from './control-chars.ts';
import { formatDuration } from './duration.ts';
import { EXIT, printJson, renderTimeline } from './output.ts';
import { findIncident, openStatusSource, type StatusSnapshot, type StatusStore } from './status-source.ts';
import {
  nextDue,
  pauseLines,
  renderStatusTable,
  statusChangeKey,
  withRuns,
  type ClusterHygiene,
  type ClusterMaintenance,
  type StatusEntry,
} from './status-table.ts';
import type { MaintenanceStepDone } from '../../functions/core/maintenance/index.ts';
import { watchStatus } from './status-watch.ts';
import { incidentRefFrom } from './incident-ref.ts';

export const help = `usage: ${PROGRAM} status [INCIDENT] (--state FILE | --table NAME [--region R]) [--all] [--watch [--interval DUR]] [--json] [--dead-letters]

Without INCIDENT: a table of the incidents that are open, awaiting their replacement, or ended in
the last 24 h (--all: every one), what needs a person first (blocked, failed, a replacement
overdue), then open, awaiting a replacement, ended; oldest first within each. Columns: the id's
first 8 characters, cluster, target (the member's name), state, reason (the last decision's code),
age (since it opened), next (when its next step is due) and attempt. Pauses and a storm hold are
listed above it, then a line for each cluster with a leader-hygiene record (its last judgement
and the last move) and for each with a maintenance run in flight (why, the steps done, the one
running) or ended (how, why, when). With INCIDENT (an id, or a unique prefix of one): that incident and its journal
as a timeline. status only reads: it works on a read-only file and while another process owns the
file, and never writes to it.

  --state FILE      the SQLite state file of remediate or run
  --table NAME      a deployed stack's DynamoDB table, instead of --state
  --region R        the table's AWS region (default: AWS_REGION or the AWS config)
  --all             every incident, not only those open or ended in the last 24 h
  --watch           read again every --interval: on a terminal the table is redrawn in place,
                    elsewhere a block (a line with the time, then the table) is printed each time
                    the table says something new; ctrl-c (SIGINT) or SIGTERM ends it, exit 0. A
                    read that fails after the first is said (on stderr off a terminal) and tried
                    again each interval
  --interval DUR    how often --watch reads (default 2s, at least 100ms); with --table each read
                    queries every incident the table keeps: on a large table, give a longer one
  --dead-letters    list the inputs that were refused as invalid, with the field and problem
  --json            print JSON instead of text: every incident, whatever its age`;

/** Ended incidents older than this are left out of the table unless --all. */
export const RECENT_MS = 24 * 3_600_000;
const DEFAULT_INTERVAL_MS = 2_000;
const MIN_INTERVAL_MS = 100;

const iso = (at: number) => new Date(at).toISOString();

function summary(i: Incident, entry?: StatusEntry) {
  const due = entry && nextDue(entry);
  return {
    incidentId: i.incidentId,
    clusterId: i.clusterId,
    state: i.state,
    target: i.target,
    member: i.memberId ? { id: i.memberId, name: i.memberName ?? '' } : null,
    attempt: i.attempt,
    lastReason: i.lastDecision?.reason ?? null,
    lastMessage: i.lastDecision?.message ?? null,
    openedAt: iso(i.openedAt),
    updatedAt: iso(i.updatedAt),
    ...(entry ? { nextDueAt: due === undefined ? null : iso(due), replacementSaid: entry.replacementSaid ?? null } : {}),
  };
}

/** A cluster's hygiene record as --json says it: the last judgement, the last alert and the last move. */
function hygieneSummary({ clusterId, record }: ClusterHygiene) {
  const move = record.moves.at(-1);
  return {
    clusterId,
    lastJudged: record.lastJudged ? { ...record.lastJudged, at: iso(record.lastJudged.at) } : null,
    lastAlert: record.lastAlert ? { ...record.lastAlert, at: iso(record.lastAlert.at) } : null,
    lastMove: move
      ? {
          moveId: move.moveId,
          from: move.from,
          to: move.to,
          state: move.state,
          at: iso(move.at),
          endedAt: move.endedAt === undefined ? null : iso(move.endedAt),
          message: move.message ?? null,
        }
      : null,
  };
}

/** A cluster's maintenance as --json says it: the run in flight (steps done, the one claimed now) and the last run ended. */
function maintenanceSummary({ clusterId, record: { run, lastRun } }: ClusterMaintenance) {
  const steps = (done: readonly MaintenanceStepDone[]) => done.map((d) => ({ ...d, at: iso(d.at) }));
  return {
    clusterId,
    run: run
      ? { runId: run.runId, reason: run.reason, askedBy: run.askedBy, startedAt: iso(run.startedAt), steps: steps(run.done), running: run.claim?.key ?? null }
      : null,
    lastRun: lastRun
      ? {
          runId: lastRun.runId,
          outcome: lastRun.outcome,
          reason: lastRun.endReason,
          message: lastRun.message,
          startedAt: iso(lastRun.startedAt),
          endedAt: iso(lastRun.endedAt),
          steps: steps(lastRun.done),
        }
      : null,
  };
}

async function showIncident(store: StatusStore, where: string, ref: string, json: boolean): Promise<void> {
  const found = await findIncident(store, where, ref);
  const journaled = timelineOf(await store.journal(found.incidentId));
  if (json) {
    printJson({ incident: summary(found), timeline: journaled, result: found.result ?? null });
    return;
  }
  // What the file holds came from outside (reports, member names, etcd's errors): shown escaped.
  const incident = escapeControlsIn(found);
  const timeline = escapeControlsIn(journaled);
  const s = summary(incident);
  process.stdout.write(
    [
      `incident:    ${s.incidentId}`,
      `cluster:     ${s.clusterId}`,
      `state:       ${s.state}`,
      `target:      ${targetKeyOf(incident.target)}${s.member ? ` → ${s.member.name || s.member.id} (${s.member.id})` : ''}`,
      `attempt:     ${s.attempt}`,
      `last:        ${s.lastReason ? `${s.lastReason}: ${s.lastMessage}` : 'no decision yet'}`,
      `opened:      ${s.openedAt}`,
      'timeline:',
      renderTimeline(timeline, incident.openedAt),
      '',
    ].join('\n'),
  );
}

function printIncidents(snapshot: StatusSnapshot, json: boolean, recentMs: number | undefined): void {
  if (json) {
    const entries = new Map(snapshot.entries.map((e) => [e.incident.incidentId, e]));
    const { incidents, pauses, hygiene, maintenance } = snapshot;
    const runs = withRuns(maintenance);
    printJson({
      incidents: incidents.map((i) => summary(i, entries.get(i.incidentId))),
      ...(pauseLines(pauses).length > 0 ? { pauses } : {}),
      ...(hygiene.length > 0 ? { hygiene: hygiene.map(hygieneSummary) } : {}),
      ...(runs.length > 0 ? { maintenance: runs.map(maintenanceSummary) } : {}),
    });
    return;
  }
  const width = process.stdout.isTTY ? process.stdout.columns : undefined;
  process.stdout.write(`${renderStatusTable({ ...snapshot, now: Date.now(), width, recentMs }).join('\n')}\n`);
}

async function listDeadLetters(store: StatusStore, json: boolean): Promise<void> {
  const dead = (await store.listDeadLetters()).map((d) => ({ ...d, receivedAt: iso(d.receivedAt) }));
  if (json) {
    printJson({ deadLetters: dead });
    return;
  }
  if (dead.length === 0) {
    process.stdout.write('no dead letters\n');
    return;
  }
  process.stdout.write(
    `${escapeControlsIn(dead)
      .map((d) => `${d.receivedAt}  ${d.id}  from ${d.source}  ${d.error}\n    payload: ${d.payload}`)
      .join('\n')}\n`,
  );
}

const options = {
  state: { type: 'string' },
  table: { type: 'string' },
  region: { type: 'string' },
  all: { type: 'boolean' },
  watch: { type: 'boolean' },
  interval: { type: 'string' },
  json: { type: 'boolean' },
  'dead-letters': { type: 'boolean' },
} as const;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('status', argv, options, true);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 1) throw new UsageError(`status takes at most one incident id, got ${positionals.length} arguments`);
  const ref = positionals[0] === undefined ? undefined : incidentRefFrom(positionals[0], 'INCIDENT');
  const json = values.json ?? false;
  const deadLetters = values['dead-letters'] ?? false;
  const table = ref === undefined && !deadLetters;
  const other = ref === undefined ? '--dead-letters' : 'INCIDENT';
  if (values.watch && !table) throw new UsageError(`--watch redraws the table of incidents: give no ${other}`);
  if (values.watch && json) throw new UsageError('--watch draws the table for people: --json prints once, without --watch');
  if (values.all && !table) throw new UsageError(`--all goes with the table of incidents, not with ${other}`);
  if (values.interval !== undefined && !values.watch) throw new UsageError('--interval goes with --watch');
  const intervalMs = durationFlag('interval', values.interval) ?? DEFAULT_INTERVAL_MS;
  if (intervalMs < MIN_INTERVAL_MS) throw new UsageError(`--interval: at least ${formatDuration(MIN_INTERVAL_MS)}, got ${values.interval}`);
  const recentMs = values.all ? undefined : RECENT_MS;
  const source = await openStatusSource(values);
  try {
    if (values.watch) {
      const frame = (snapshot: StatusSnapshot, now: number, width: number | undefined) => {
        const input = {
          entries: snapshot.entries,
          pauses: snapshot.pauses,
          hygiene: snapshot.hygiene,
          maintenance: snapshot.maintenance,
          now,
          width,
          recentMs,
        };
        return { lines: renderStatusTable(input), key: statusChangeKey(input) };
      };
      await watchStatus({ source, intervalMs, frame });
    } else if (deadLetters) await listDeadLetters(source.store, json);
    else if (ref !== undefined) await showIncident(source.store, source.where, ref, json);
    else printIncidents(await source.read(), json, recentMs);
    return EXIT.ok;
  } catch (error) {
    throw source.described(error);
  } finally {
    await source.close();
  }
}
