// `status`: what a state file holds: incidents, one incident's journal as a timeline, or the
// dead letters (inputs refused at the edge, with why).
import fs from 'node:fs';
import { timelineOf } from '../../../functions/core/journal-words.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { openSqliteStore, type SqliteIncidentStore } from '../../../functions/adapters/local/sqlite-store.ts';
import { describeStateError } from '../../../functions/adapters/local/state-file.ts';
import type { FleetPauses } from '../../../functions/ports/fleet.ts';
import { parseFlags, PROGRAM, requiredFlag, UsageError } from './args.ts';
import { escapeControls, escapeControlsIn } from './control-chars.ts';
import { pausesIn } from './fleet-target.ts';
import { EXIT, printJson, renderTimeline, table } from './output.ts';

export const help = `usage: etcd-remediator status [INCIDENT] --state FILE [--json] [--dead-letters]

Without INCIDENT: every incident in the state file, oldest first: state, target, attempt and the
last decision's reason, and any pause (who, since when, why). With INCIDENT (an id, or a unique prefix of one): that incident and its
journal as a timeline. status only reads: it works on a read-only file and while another process
owns the file, and never writes to it.

  --state FILE      the SQLite state file of remediate or run (required)
  --dead-letters    list the inputs that were refused as invalid, with the field and problem
  --json            print JSON instead of text`;

const iso = (at: number) => new Date(at).toISOString();
const targetOf = (i: Incident) => Object.entries(i.target).map(([k, v]) => `${k}=${v}`).join(',');

function summary(i: Incident) {
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
  };
}

async function findIncident(store: SqliteIncidentStore, ref: string): Promise<Incident> {
  const exact = await store.getIncident(ref);
  if (exact) return exact;
  const matches = (await store.listIncidents()).filter((i) => i.incidentId.startsWith(ref));
  if (matches.length === 1) return matches[0]!;
  throw new UsageError(matches.length === 0 ? `no incident ${JSON.stringify(ref)} in this state file` : `${JSON.stringify(ref)} matches ${matches.length} incidents; give more of the id`);
}

async function showIncident(store: SqliteIncidentStore, ref: string, json: boolean): Promise<void> {
  const found = await findIncident(store, ref);
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
      `target:      ${targetOf(incident)}${s.member ? ` → ${s.member.name || s.member.id} (${s.member.id})` : ''}`,
      `attempt:     ${s.attempt}`,
      `last:        ${s.lastReason ? `${s.lastReason}: ${s.lastMessage}` : 'no decision yet'}`,
      `opened:      ${s.openedAt}`,
      'timeline:',
      renderTimeline(timeline, incident.openedAt),
      '',
    ].join('\n'),
  );
}

async function listIncidents(store: SqliteIncidentStore, json: boolean): Promise<void> {
  const incidents = await store.listIncidents();
  const pauses = await pausesIn(store);
  if (json) {
    printJson({ incidents: incidents.map(summary), ...(pauseLines(pauses).length > 0 ? { pauses } : {}) });
    return;
  }
  for (const line of pauseLines(pauses)) process.stdout.write(`${escapeControls(line)}\n`);
  if (incidents.length === 0) {
    process.stdout.write('no incidents\n');
    return;
  }
  const rows = escapeControlsIn(incidents).map((i) => [i.incidentId, i.clusterId, i.state, targetOf(i), String(i.attempt), i.lastDecision?.reason ?? '', iso(i.updatedAt)]);
  process.stdout.write(`${table(['INCIDENT', 'CLUSTER', 'STATE', 'TARGET', 'ATTEMPT', 'LAST REASON', 'UPDATED'], rows)}\n`);
}

const pauseLines = (pauses: FleetPauses): string[] => [
  ...(pauses.fleet ? [`paused fleet-wide by ${pauses.fleet.by} since ${iso(pauses.fleet.at)}: ${pauses.fleet.why} (${PROGRAM} resume)`] : []),
  ...Object.entries(pauses.clusters ?? {}).map(([id, p]) => `cluster ${id} paused by ${p.by} since ${iso(p.at)}: ${p.why} (${PROGRAM} resume --cluster ${id})`),
];

async function listDeadLetters(store: SqliteIncidentStore, json: boolean): Promise<void> {
  const dead = (await store.listDeadLetters()).map((d) => ({ ...d, receivedAt: iso(d.receivedAt) }));
  if (json) {
    printJson({ deadLetters: dead });
    return;
  }
  if (dead.length === 0) {
    process.stdout.write('no dead letters\n');
    return;
  }
  process.stdout.write(`${escapeControlsIn(dead).map((d) => `${d.receivedAt}  ${d.id}  from ${d.source}  ${d.error}\n    payload: ${d.payload}`).join('\n')}\n`);
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('status', argv, { state: { type: 'string' }, json: { type: 'boolean' }, 'dead-letters': { type: 'boolean' } }, true);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 1) throw new UsageError(`status takes at most one incident id, got ${positionals.length} arguments`);
  const statePath = requiredFlag('state', values.state, 'state.sqlite');
  if (!fs.existsSync(statePath)) throw new UsageError(`--state: no state file at ${statePath}`);
  const store = openSqliteStore({ path: statePath, readOnly: true });
  try {
    const json = values.json ?? false;
    if (values['dead-letters']) await listDeadLetters(store, json);
    else if (positionals[0] !== undefined) await showIncident(store, positionals[0], json);
    else await listIncidents(store, json);
    return EXIT.ok;
  } catch (error) {
    // A file damaged past its first page fails only here: still the path and the problem in one line.
    throw describeStateError(statePath, error);
  } finally {
    await store.close();
  }
}
