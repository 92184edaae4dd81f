// probe-members: MemberUnhealthy or RetryDue in, MembersProbed out.
import { probeMembers } from '../app/probe-members.ts';
import type { Deps } from '../app/deps.ts';
import { eventHandler } from '../lambda/event-handler.ts';

export const createProbeMembersHandler = (deps: Deps) => eventHandler('probe-members', deps, (d, event) => probeMembers(d, event));
