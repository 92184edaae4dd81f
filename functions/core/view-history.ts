// How many cluster views an incident keeps, and travel along on MembersProbed: enough for the
// evidence rule's term and leader checks, bounded for the event's and the record's size. One
// constant for both, so the store never keeps more than the schema accepts.
import type { ClusterView } from './view.ts';

export const MAX_INCIDENT_VIEWS = 10;

/** Appends a view and keeps the newest MAX_INCIDENT_VIEWS, oldest first. */
export const withView = (views: readonly ClusterView[], view: ClusterView): ClusterView[] =>
  [...views, view].slice(-MAX_INCIDENT_VIEWS);
