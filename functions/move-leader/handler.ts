// move-leader: MembersProbed in; RemediationApproved, RetryRequested or RemediationBlocked out.
import { moveLeader } from '../app/move-leader.ts';
import type { Deps } from '../app/deps.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const createMoveLeaderHandler = (deps: Deps) => eventHandler('move-leader', deps, (d, event) => moveLeader(d, event.detail));
