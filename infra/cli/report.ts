// `report`: one incident as a self-contained HTML page (report-model.ts folds it, report-page.ts
// draws it), read from a state file or a deployed stack's table, as status reads them.
import fs from 'node:fs';
import path from 'node:path';
import { isIncidentId } from '../../functions/core/incident/index.ts';
import type { Incident, JournalEntry } from '../../functions/ports/incident-store.ts';
import { maintenanceRunOf, reportModel, type ReportMaintenanceRun } from './report/report-model.ts';
import { renderReport } from './report/report-page.ts';
import { parseFlags, PROGRAM, UsageError } from './args.ts';
import { escapeControls } from './control-chars.ts';
import { incidentRefFrom } from './incident-ref.ts';
import { EXIT } from './output.ts';
import { findIncident, openStatusSource } from './status-source.ts';

export const help = `usage: ${PROGRAM} report INCIDENT (--state FILE | --table NAME [--region R]) [--out FILE.html]

Writes one incident as a self-contained HTML page (no script, font or image from anywhere else):
its outcome, reason code, sentence and evidence; a timeline of each step (probes, waits, retries,
the grace window, the leader move, the snapshot, the removal, the new leader, the replacement);
one lane per member with, at each probe, whether it was reachable and on which
path, and whom it named leader at what term; and the figures from the event to the decision, the
removal, the new leader and the replacement. INCIDENT is an id, or a unique prefix of one. report
only reads the state file or table.

  --state FILE      the SQLite state file of remediate or run
  --table NAME      a deployed stack's DynamoDB table, instead of --state
  --region R        the table's AWS region (default: AWS_REGION or the AWS config)
  --out FILE.html   where to write the page (default: incident-<id>.html in the current directory)`;

const options = {
  state: { type: 'string' },
  table: { type: 'string' },
  region: { type: 'string' },
  out: { type: 'string' },
} as const;

/**
 * The page's own name, made from the incident's id only once it is in the shape ids are made in:
 * the id is read back from a store, which holds whatever was written there, a path included.
 */
export function reportFileName(incident: Pick<Incident, 'incidentId'>): string {
  if (!isIncidentId(incident.incidentId)) {
    throw new UsageError(
      `incident ${JSON.stringify(incident.incidentId)}: its id is not a lowercase UUID, so report makes no file name of it; give --out FILE.html`,
    );
  }
  return `incident-${incident.incidentId}.html`;
}

/** Where the page goes; its folder must be there, checked before anything is read. */
function outPath(out: string): string {
  if (out.trim() === '') throw new UsageError('--out: a file name is required (e.g. --out incident.html)');
  const file = path.resolve(out);
  if (!fs.existsSync(path.dirname(file))) throw new UsageError(`--out: no directory ${path.dirname(file)}`);
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) throw new UsageError(`--out: ${file} is a directory; give a file name`);
  return file;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('report', argv, options, true);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  if (positionals.length !== 1)
    throw new UsageError(
      `report takes one incident id (or a unique prefix of one), got ${positionals.length === 0 ? 'none' : `${positionals.length} arguments`}`,
    );
  const ref = incidentRefFrom(positionals[0]!, 'INCIDENT');
  const given = values.out === undefined ? undefined : outPath(values.out);
  const source = await openStatusSource(values);
  try {
    const incident = await findIncident(source.store, source.where, ref);
    const journal = await source.store.journal(incident.incidentId);
    const maintenance = maintenanceRunOf((await source.store.maintenanceRecord(incident.clusterId))?.record, incident);
    const file = given ?? path.resolve(reportFileName(incident));
    writeReport(file, incident, journal, maintenance);
    process.stdout.write(`${escapeControls(`report of incident ${incident.incidentId} written to ${file}`)}\n`);
    return EXIT.ok;
  } catch (error) {
    throw source.described(error);
  } finally {
    await source.close();
  }
}

/** The page of one incident already read, for callers that hold the store (demo). */
export function writeReport(file: string, incident: Incident, journal: readonly JournalEntry[], maintenance?: ReportMaintenanceRun): void {
  fs.writeFileSync(file, renderReport(reportModel({ incident, journal, ...(maintenance ? { maintenance } : {}) })));
}
