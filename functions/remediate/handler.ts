// remediate: RemediationApproved in; RemediationCompleted, RetryRequested or RemediationBlocked out.
// It hosts maintenance's steps too (MaintenanceDue in; the next one, or MaintenanceEnded, out): a
// defragmentation may take minutes, as a removal with its snapshot may.
import { maintain } from '../app/maintenance/index.ts';
import { remediate } from '../app/removal/index.ts';
import type { ClusterDeps } from '../app/common/index.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const createRemediateHandler = (deps: ClusterDeps) => eventHandler('remediate', deps, { remediate, maintain });
