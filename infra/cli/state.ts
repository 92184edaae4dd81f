// The state file as the commands that write it (remediate, run) hold it: owned by this process
// from before the first write to exit, and what is open in it, in one line per incident.
import type { Incident } from '../../functions/ports/incident-store.ts';
import { openSqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { ownStateFile, type StateOwnership } from '../../functions/adapters/local/state-owner.ts';
import { PROGRAM } from './args.ts';
import { escapeControls } from './control-chars.ts';
import { EXIT } from './output.ts';

/** Takes the state file or throws a StateFileError (exit 2); a lease lost later ends the process. */
export function ownState(file: string): StateOwnership {
  return ownStateFile(file, {
    onLost: (by) => {
      // Another process judged this one gone and runs the file now: going on would run every incident twice.
      process.stderr.write(`${PROGRAM}: state file ${file} was taken over by pid ${by.pid} at ${new Date(by.startedAt).toISOString()}; stopping\n`);
      process.exit(EXIT.usage);
    },
  });
}

/** Every incident in the file, read before the runtime starts (the caller owns the file). */
export async function incidentsIn(file: string): Promise<Incident[]> {
  const store = openSqliteStore({ path: file });
  try {
    return await store.listIncidents();
  } finally {
    await store.close();
  }
}

const targetText = (i: Incident) =>
  Object.entries(i.target)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** "ID (cluster, target, attempt n)". */
// The id and target are what a report said: escaped, so each incident stays one line wherever it is listed.
export const incidentLabel = (i: Incident): string => escapeControls(`${i.incidentId} (${i.clusterId}, ${targetText(i)}, attempt ${i.attempt})`);

/** One incident as a row of a list: id, cluster, target, attempt, when it opened. */
export const incidentRow = (i: Incident): string =>
  escapeControls(`${i.incidentId}  ${i.clusterId}  ${targetText(i)}  attempt ${i.attempt}  opened ${new Date(i.openedAt).toISOString()}`);

/** The incident an id or a unique prefix of one names, or why none does. */
export function findIncident(incidents: readonly Incident[], ref: string): Incident | string {
  const exact = incidents.find((i) => i.incidentId === ref);
  if (exact) return exact;
  const matches = incidents.filter((i) => i.incidentId.startsWith(ref));
  if (matches.length === 1) return matches[0]!;
  return matches.length === 0 ? 'no incident with that id in this state file' : `matches ${matches.length} incidents; give more of the id`;
}
