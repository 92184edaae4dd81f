// move-leader hosts both works that move leadership off a leader: an incident's (MembersProbed in;
// RemediationApproved, RetryRequested or RemediationBlocked out) and leader hygiene's
// (LeaderDegraded in, HygieneMoveEnded out).
import { moveDegradedLeader } from '../app/hygiene/index.ts';
import { moveLeader } from '../app/move/index.ts';
import type { ClusterDeps } from '../app/common/index.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const createMoveLeaderHandler = (deps: ClusterDeps) =>
  eventHandler('move-leader', deps, { 'move-leader': moveLeader, 'move-degraded-leader': moveDegradedLeader });
