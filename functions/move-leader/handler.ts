// move-leader: MembersProbed in (RemediationApproved, RetryRequested or RemediationBlocked out), and
// leader hygiene's LeaderDegraded in (HygieneMoveEnded out): both move leadership off a leader.
import { moveDegradedLeader } from '../app/hygiene/index.ts';
import { moveLeader } from '../app/move/index.ts';
import type { Deps } from '../app/common/index.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const createMoveLeaderHandler = (deps: Deps) =>
  eventHandler(
    'move-leader',
    deps,
    (d, event) => (event.detailType === 'LeaderDegraded' ? moveDegradedLeader(d, event.detail) : moveLeader(d, event.detail)) as Promise<unknown>,
  );
