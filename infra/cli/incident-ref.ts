// An incident as a person names it on the command line: a whole id or the start of one, in the
// shape ids are made (functions/core/incident/incident-id.ts). Anything else is refused before any store is
// read, so no path, key or line is ever made from it.
import { INCIDENT_ID_EXAMPLE, isIncidentIdPrefix } from '../../functions/core/incident/index.ts';
import { UsageError } from './args.ts';

/** `given` when it can name an incident; a usage error naming `argument` (`INCIDENT`, `--resume`) otherwise. */
export function incidentRefFrom(given: string, argument: string): string {
  if (!isIncidentIdPrefix(given)) {
    throw new UsageError(
      `${argument}: ${JSON.stringify(given)} is not an incident id nor the start of one (ids are lowercase UUIDs, e.g. ${INCIDENT_ID_EXAMPLE})`,
    );
  }
  return given;
}
