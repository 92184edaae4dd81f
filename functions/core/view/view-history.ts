// How many cluster views an incident keeps: enough for the evidence rule's term and leader checks,
// bounded for the record's size, by count and by bytes. The newest view is always kept; the
// leader-unreachable streak is carried on the incident, so a shorter history never restarts the
// grace window. MembersProbed carries the newest view only.
import type { ClusterView } from './view.ts';
import { jsonSize } from '../common/index.ts';

export const MAX_INCIDENT_VIEWS = 10;

/**
 * The JSON bytes an incident's views take together, at most: ten views of a 7-member cluster fit
 * many times over as etcd and Kubernetes word things; views as large as the view limits let them
 * grow keep two or three (a view of VIEW_LIMITS.members at its largest fits on its own).
 */
export const MAX_HISTORY_BYTES = 160 * 1024;

export const viewBytes = (view: ClusterView): number => jsonSize(view);

/** The newest views, oldest first: at most MAX_INCIDENT_VIEWS, and as many as fit MAX_HISTORY_BYTES. */
export function keptViews(views: readonly ClusterView[]): ClusterView[] {
  const kept: ClusterView[] = [];
  let bytes = 0;
  for (let i = views.length - 1; i >= 0 && kept.length < MAX_INCIDENT_VIEWS; i--) {
    const view = views[i]!;
    bytes += viewBytes(view);
    if (kept.length > 0 && bytes > MAX_HISTORY_BYTES) break;
    kept.unshift(view);
  }
  return kept;
}

/** Appends a view and keeps what keptViews keeps. */
export const withView = (views: readonly ClusterView[], view: ClusterView): ClusterView[] => keptViews([...views, view]);
