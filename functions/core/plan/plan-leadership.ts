// The last step of plan(): the gates passed, so who leads decides how the target goes.
import type { Decision, PathName } from '../common/index.ts';
import {
  describeMember,
  describeMemberIn,
  credentialProblem,
  describeDuration,
  describePaths,
  describeTime,
  howReached,
  listWords,
  downAsLeaderBefore,
  type LeaderJudgement,
} from '../view/index.ts';
import { rankMoveCandidates } from './candidates.ts';
import { backoffRetryAt, describeResampleWait, resampleAt, WAITS_IN_A_ROW } from '../waits/index.ts';
import { approve, backoffOf, block, close, lookAgainAfterBackoff, retryAt, sentence, type PlanContext } from './plan-context.ts';
import { plannedTarget, targetNotFound } from './plan-checks.ts';

const nameOf = (ctx: PlanContext, id: string | undefined): string => describeMemberIn(ctx.view, id);

/** The policy's path order, limited to the paths on which the target answered. */
export function movePaths(ctx: PlanContext): PathName[] {
  const answered = (ctx.target?.paths ?? []).filter((p) => p.reachability === 'ok').map((p) => p.path);
  const ordered = ctx.input.policy.pathOrder.filter((p) => answered.includes(p));
  // A path the policy does not list still beats having none: the target did answer on it.
  return ordered.length > 0 ? ordered : [...new Set(answered)];
}

function moveLeader(ctx: PlanContext, j: LeaderJudgement): Decision {
  const exclude = ctx.input.incident.excludeCandidates ?? [];
  const candidates = rankMoveCandidates(ctx.view!, ctx.input.targetId, exclude);
  if (candidates.length === 0) {
    const excluded = exclude.length > 0 ? ` (excluded as being remediated: ${listWords(exclude.map((id) => nameOf(ctx, id)))})` : '';
    return block(
      ctx,
      'NO_MOVE_CANDIDATE',
      `${ctx.name} is the leader but no other voting member is reachable, healthy and free to take over${excluded}; blocked until one is.`,
    );
  }
  const paths = movePaths(ctx);
  const [first, ...rest] = candidates.map(describeMember);
  const then = rest.length > 0 ? ` (then ${listWords(rest)})` : '';
  return {
    kind: 'move-leader',
    reason: 'LEADER_MOVE_REQUIRED',
    leaderId: ctx.input.targetId,
    candidates: candidates.map((m) => m.id),
    paths,
    message: sentence(j.message, `move leadership to ${first}${then} over ${paths.join(', ')} before removing it`),
    evidence: ctx.evidence,
  };
}

/**
 * The only thing that held the incident back was our own sight of the leader down on every path;
 * now it answers on every path and is healthy, before the grace window ran out. Nothing in what we
 * can see is sick any more, so the incident closes rather than cost an election.
 */
function recovered(ctx: PlanContext, j: LeaderJudgement): Decision | undefined {
  const { policy, samples, targetId } = ctx.input;
  const target = ctx.target;
  if (!policy.closeWhenRecovered || !target?.healthy || !target.paths.every((p) => p.reachability === 'ok')) return undefined;
  const down = downAsLeaderBefore(samples, targetId);
  if (!down) return undefined;
  const stretch = down.to > down.from ? `from ${describeTime(down.from)} to ${describeTime(down.to)}` : `at ${describeTime(down.from)}`;
  // Remediate judges again under the lock: a leader back after an approval past the window is kept too.
  const when = ctx.input.now - down.from < policy.graceMs ? `before the grace window of ${describeDuration(policy.graceMs)} ran out` : 'before it was removed';
  return close(
    withGrace(ctx, down.from),
    'TARGET_RECOVERED',
    sentence(
      `${j.message.replace(/[.\s]+$/, '')}, healthy, after it was unreachable on every path ${stretch}`,
      `it recovered ${when}, so the incident closes with nothing removed; report it again if it is still sick`,
    ),
  );
}

/**
 * The grace window as facts, for whoever reads the decision later (the incident report draws it):
 * from the first sample of the streak that saw the leader down, to when it runs out.
 */
const withGrace = (ctx: PlanContext, since: number): PlanContext => ({
  ...ctx,
  evidence: { ...ctx.evidence, grace: { since, endsAt: since + ctx.input.policy.graceMs } },
});

function unreachableLeader(plain: PlanContext, j: LeaderJudgement): Decision {
  const { policy, now } = plain.input;
  const since = j.since ?? now;
  const graceEnd = since + policy.graceMs;
  const ctx = withGrace(plain, since);
  const down = `${ctx.name} is the leader and unreachable on every path (${describePaths(j.paths)}) for ${describeDuration(now - since)}, confirmed by the followers at term ${j.term}`;
  if (now < graceEnd) {
    // Spends no attempt, so the backoff does not grow here: the grace window's end bounds the looks.
    const at = Math.min(graceEnd, backoffRetryAt(backoffOf(ctx)));
    return retryAt(ctx, 'LEADER_UNREACHABLE', at, sentence(down, `the grace window ends at ${describeTime(graceEnd)}, we look again at ${describeTime(at)}`));
  }
  if (!policy.allowRemoveWithoutLeaderMove) {
    return block(
      ctx,
      'REMOVE_WITHOUT_MOVE_DISABLED',
      sentence(
        down,
        `past the grace window of ${describeDuration(policy.graceMs)}, but removing a leader without a move is disabled by policy: blocked, bring it back or move leadership by hand`,
      ),
    );
  }
  return approve(
    ctx,
    'LEADER_UNREACHABLE_PAST_GRACE',
    'skipped',
    sentence(
      down,
      `past the grace window of ${describeDuration(policy.graceMs)} with quorum safe, so removal is approved without a leader move, at the cost of one election`,
    ),
  );
}

function leaderGone(ctx: PlanContext, j: LeaderJudgement, gone: string): Decision {
  const finding = `The leader ${ctx.name} is gone: ${gone}, and the followers still name it leader while no path reaches it (${describePaths(j.paths)})`;
  if (!ctx.input.policy.allowRemoveWithoutLeaderMove) {
    return block(ctx, 'REMOVE_WITHOUT_MOVE_DISABLED', sentence(finding, 'removing a leader without a move is disabled by policy: blocked'));
  }
  return approve(ctx, 'LEADER_GONE', 'skipped', sentence(finding, 'with quorum safe, removal is approved without a leader move'));
}

/** A wait that only looks again: one election timeout the first time, longer each time in a row (resample-wait.ts). */
function lookAgain(
  ctx: PlanContext,
  j: LeaderJudgement,
  reason: 'ELECTION_IN_PROGRESS' | 'LEADER_UNREACHABLE_UNCONFIRMED',
  said: (after: string) => string,
): Decision {
  const { policy, now, incident } = ctx.input;
  const before = incident.waitsInARow ?? 0;
  const at = resampleAt({ now, openedAt: incident.openedAt, before, graceFrom: j.since }, policy);
  const after = describeResampleWait(before, now, at, policy);
  return { ...retryAt(ctx, reason, at, said(`${after}, at ${describeTime(at)}`)), evidence: { ...ctx.evidence, [WAITS_IN_A_ROW]: before + 1 } };
}

export function decideLeadership(ctx: PlanContext): Decision {
  const { target, judgement: j } = ctx;
  // The target-found check runs first; were it ever skipped, a missing target must not pass for a learner.
  if (!target) return targetNotFound(ctx.view, plannedTarget(ctx), ctx.evidence);
  if (target.isLearner) {
    return approve(
      ctx,
      'TARGET_IS_LEARNER',
      'not-needed',
      `${ctx.name} is a learner, which never leads and does not vote, and ${howReached(target)}; removal is approved without a leader move.`,
    );
  }
  if (!j) throw new Error('buildPlanContext judges every voting target');
  if (j.verdict === 'TARGET_NOT_LEADER') {
    const leader = `${nameOf(ctx, j.leaderId)}${j.term === undefined ? '' : ` at term ${j.term}`}`;
    const finding = j.leaderChanged
      ? `Leadership moved from ${ctx.name} to ${leader}, so it is a follower now; it ${howReached(target)}`
      : `${ctx.name} is a follower (the members agree the leader is ${leader}) and ${howReached(target)}`;
    return approve(ctx, 'TARGET_IS_FOLLOWER', 'not-needed', sentence(finding, 'removal is approved without a leader move'));
  }
  const unreachable = j.verdict === 'LEADER_UNREACHABLE' || j.verdict === 'LEADER_UNREACHABLE_UNCONFIRMED';
  if (ctx.targetGone !== undefined && unreachable) return leaderGone(ctx, j, ctx.targetGone);

  // Credentials only matter when the target is the one we would have to talk to: the leader.
  const problem = !target.reachable && j.leaderId === target.id ? credentialProblem(j.paths) : undefined;
  if (problem) {
    return block(
      ctx,
      problem.reason,
      `Every path to ${ctx.name} fails on credentials (${problem.failures}), so it cannot be asked to hand over leadership; blocked, fix ${problem.credential}.`,
    );
  }

  switch (j.verdict) {
    case 'LEADER_REACHABLE':
      return recovered(ctx, j) ?? moveLeader(ctx, j);
    case 'LEADER_UNREACHABLE':
      return unreachableLeader(ctx, j);
    case 'LEADER_UNREACHABLE_UNCONFIRMED':
      return lookAgain(ctx, j, 'LEADER_UNREACHABLE_UNCONFIRMED', (after) => sentence(j.message, `we look again after ${after}`));
    case 'ELECTION_IN_PROGRESS':
      return lookAgain(ctx, j, 'ELECTION_IN_PROGRESS', (after) =>
        sentence(j.message, `${ctx.name} cannot be judged until a leader stands, so we look again after ${after}`),
      );
    case 'CLUSTER_UNREACHABLE':
      return lookAgainAfterBackoff(ctx, 'CLUSTER_UNREACHABLE', j.message);
  }
}
