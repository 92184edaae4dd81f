// remediate: RemediationApproved in; RemediationCompleted, RetryRequested or RemediationBlocked out.
import { remediate } from '../app/removal/index.ts';
import type { ClusterDeps } from '../app/common/index.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const createRemediateHandler = (deps: ClusterDeps) => eventHandler('remediate', deps, { remediate });
