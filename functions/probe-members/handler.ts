// probe-members: MemberUnhealthy or RetryDue in, MembersProbed out.
import { probeMembers } from '../app/incident/index.ts';
import type { Deps } from '../app/common/index.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const createProbeMembersHandler = (deps: Deps) => eventHandler('probe-members', deps, (d, event) => probeMembers(d, event));
