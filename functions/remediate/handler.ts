// remediate: RemediationApproved in; RemediationCompleted, RetryRequested or RemediationBlocked out.
import { remediate } from '../app/removal/index.ts';
import type { Deps } from '../app/common/index.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const createRemediateHandler = (deps: Deps) => eventHandler('remediate', deps, (d, event) => remediate(d, event.detail));
