// Incident ids are ours: every store mints one as randomUUID does, a lowercase UUID. An id in that
// shape is safe as a file name, a key, a log line and a Kubernetes status, so anything else that
// arrives as one (in an event, a flag, a request's status) is refused at the edge, never carried.
import { z } from 'zod';

/** One written out, for the messages that say what an id looks like. */
export const INCIDENT_ID_EXAMPLE = '3f2a1b0c-9d8e-4f70-a615-2b4c6d8e0f13';

export const INCIDENT_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Where the dashes go: every other place is a lowercase hex digit. */
const SHAPE = 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';

export const NOT_AN_INCIDENT_ID = `must be an incident id: a lowercase UUID, e.g. ${INCIDENT_ID_EXAMPLE}`;

export const isIncidentId = (value: string): boolean => INCIDENT_ID_PATTERN.test(value);

/** The start of an id, as a person types a short one (`3f2a`, `3f2a1b0c-9d`); a whole id is one too. */
export const isIncidentIdPrefix = (value: string): boolean =>
  value.length > 0 && value.length <= SHAPE.length && [...value].every((char, i) => (SHAPE[i] === '-' ? char === '-' : /^[0-9a-f]$/.test(char)));

export const incidentIdSchema = z.string().regex(INCIDENT_ID_PATTERN, NOT_AN_INCIDENT_ID);
