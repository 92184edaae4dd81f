// The preconditions of plan(), in the order they are evaluated. Each either passes or decides,
// like the checks of Cluster API's KubeadmControlPlane remediation.
import type { Decision, Evidence, MemberId } from '../common/index.ts';
import { block, lookAgainAfterBackoff, retryAt, sentence, type PlanContext } from './plan-context.ts';
import {
  credentialProblem,
  describeDuration,
  describePath,
  describeTime,
  howReached,
  describeSelector,
  type TargetMatch,
  describeMember,
  listWords,
  type ClusterView,
} from '../view/index.ts';
import { inARow, probeDeadlineMs, timedOutEverywhere, timedOutOnEveryPath } from '../budget/index.ts';
import { pastIncidentDeadline } from '../waits/index.ts';
import { quorumGate, type GateResult } from './quorum-gate.ts';
import { targetNotFoundSentence } from './quorum-gate-words.ts';

export type CheckResult = Decision | 'pass';

export interface PlanCheck {
  name: string;
  run: (ctx: PlanContext) => CheckResult;
}

const incidentDeadline: PlanCheck = {
  name: 'incident-deadline',
  run: (ctx) => {
    const { incident, policy, now } = ctx.input;
    if (!pastIncidentDeadline(incident.openedAt, now, policy)) return 'pass';
    const age = now - incident.openedAt;
    return block(
      ctx,
      'INCIDENT_DEADLINE_EXCEEDED',
      `The incident for ${ctx.name} has been open ${describeDuration(age)} since ${describeTime(incident.openedAt)}, past its deadline of ${describeDuration(policy.incidentDeadlineMs)}; blocked until an operator remediates ${ctx.name} or opens a new incident.`,
    );
  },
};

const attemptBudget: PlanCheck = {
  name: 'attempt-budget',
  run: (ctx) => {
    const { incident, policy } = ctx.input;
    if (incident.attempt < policy.maxAttempts) return 'pass';
    return block(
      ctx,
      'ATTEMPTS_EXHAUSTED',
      `${ctx.name} has used all ${policy.maxAttempts} attempts of its incident; blocked until an operator remediates it or raises maxAttempts.`,
    );
  },
};

/**
 * KCP parity: maxRetry counts retries, i.e. remediations after the first in a chain where each
 * follows the one before within minHealthyPeriod. retryCount is the chain's length so far, so
 * the next remediation is retry number retryCount, allowed while retryCount <= maxRetry.
 */
const maxRetry: PlanCheck = {
  name: 'kcp-max-retry',
  run: (ctx) => {
    const { remediation, policy, now } = ctx.input;
    const last = remediation.lastRemediatedAt;
    if (policy.maxRetry === undefined || last === undefined) return 'pass';
    if (now - last >= policy.minHealthyPeriodMs || remediation.retryCount <= policy.maxRetry) return 'pass';
    return block(
      ctx,
      'MAX_RETRY_EXCEEDED',
      `${ctx.name} was remediated ${remediation.retryCount} time${remediation.retryCount === 1 ? '' : 's'}, the last ${describeDuration(now - last)} ago, within the healthy period of ${describeDuration(policy.minHealthyPeriodMs)}; blocked, maxRetry is ${policy.maxRetry}.`,
    );
  },
};

/** KCP parity: at least retryPeriod between two remediations of the same target. */
const retryPeriod: PlanCheck = {
  name: 'kcp-retry-period',
  run: (ctx) => {
    const { remediation, policy, now } = ctx.input;
    const last = remediation.lastRemediatedAt;
    if (last === undefined || now >= last + policy.retryPeriodMs) return 'pass';
    const at = last + policy.retryPeriodMs;
    return retryAt(
      ctx,
      'REMEDIATION_RETRY_PERIOD',
      at,
      `${ctx.name} was remediated ${describeDuration(now - last)} ago and the retry period is ${describeDuration(policy.retryPeriodMs)}; we look again at ${describeTime(at)}.`,
    );
  },
};

const clusterReachable: PlanCheck = {
  name: 'cluster-reachable',
  run: (ctx) => {
    const { view } = ctx;
    if (view && view.leader.reports.length > 0) return 'pass';
    // An empty view still knows how each seed failed to give a member list.
    const paths = [...(view?.members ?? []).flatMap((m) => m.paths), ...(view?.listFailures ?? [])];
    const problem = credentialProblem(paths);
    if (problem) {
      return block(
        ctx,
        problem.reason,
        `No member of the cluster accepts our credentials (${problem.failures}), so ${ctx.name} cannot be judged; blocked, fix ${problem.credential}.`,
      );
    }
    const finding =
      paths.length === 0
        ? `No member of the cluster answered, so ${ctx.name} cannot be judged`
        : view && timedOutEverywhere(view)
          ? slowNetwork(ctx, view)
          : `No member of the cluster answered (${paths.map(describePath).join('; ')}), so ${ctx.name} cannot be judged`;
    return lookAgainAfterBackoff(ctx, 'CLUSTER_UNREACHABLE', finding);
  },
};

/** Every seed ran out of time: say so in those words, with the figures, and what to raise. */
function slowNetwork(ctx: PlanContext, view: ClusterView): string {
  const { policy, samples } = ctx.input;
  const waited = Math.max(...view.listFailures.map((f) => f.latencyMs));
  const next = probeDeadlineMs(policy, samples);
  const raise = next > waited ? `the next probe waits ${describeDuration(next)}; ` : '';
  return `No member answered within the deadline of ${describeDuration(waited)}: all ${view.listFailures.length} endpoints timed out (${view.listFailures.map((f) => f.endpoint).join(', ')}), so ${ctx.name} cannot be judged; the network may be slow: ${raise}raise the call deadline (--timeout, policy callTimeout) if it stays so`;
}

/** What an incident is after: its member once resolved, and how a sentence names it. */
export interface WantedTarget {
  memberId?: MemberId;
  described: string;
}

/** TARGET_NOT_FOUND, whichever check finds it. */
export function targetNotFound(view: ClusterView | undefined, wanted: WantedTarget, evidence: Evidence): Decision {
  const members = (view?.members ?? []).map((m) => m.name || m.id).join(', ');
  return {
    kind: 'block',
    reason: 'TARGET_NOT_FOUND',
    // How each listed member was reached says where the member list came from.
    message: targetNotFoundSentence(view, wanted.described),
    evidence: { ...evidence, members },
  };
}

/**
 * AMBIGUOUS_TARGET: the selector names several members, so nothing says which to remove. Each
 * candidate is named by id with how it was reached, so a person can tell the sick one and give its id.
 */
export function ambiguousTarget(
  match: Extract<TargetMatch, { kind: 'ambiguous' }>,
  described: string,
  evidence: Evidence,
): Extract<Decision, { kind: 'block' }> {
  const candidates = match.members.map((m) => `${describeMember(m)}, which ${howReached(m)}`);
  const byId = match.members.map((m) => `--target ${m.id}`);
  return {
    kind: 'block',
    reason: 'AMBIGUOUS_TARGET',
    message: `${described} matches ${match.members.length} etcd members, which share ${match.sharedBy}: ${candidates.slice(0, -1).join('; ')}; and ${candidates.at(-1)}; blocked, nothing is removed on a guess: name the member by its id (${byId.slice(0, -1).join(', ')} or ${byId.at(-1)}; memberId in an event).`,
    evidence: { ...evidence, candidates: match.members.map((m) => ({ id: m.id, name: m.name, reached: howReached(m) })) },
  };
}

/**
 * The one check that decides TARGET_NOT_FOUND: for the planner, and for move-leader before it
 * plans an incident whose selector matched no member (it has no member id to plan for). Only a
 * member list that answered can say a member is missing; without one, the planner retries.
 */
export function checkTargetFound(view: ClusterView | undefined, wanted: WantedTarget, evidence: Evidence): CheckResult {
  if (!view || view.members.length === 0) return 'pass';
  if (wanted.memberId !== undefined && view.members.some((m) => m.id === wanted.memberId)) return 'pass';
  return targetNotFound(view, wanted, evidence);
}

/** The planner's target, as the checks look for it. */
export const plannedTarget = (ctx: PlanContext): WantedTarget => ({
  memberId: ctx.input.targetId,
  described: describeSelector({ memberId: ctx.input.targetId }),
});

const targetFound: PlanCheck = {
  name: 'target-found',
  run: (ctx) => checkTargetFound(ctx.view, plannedTarget(ctx), ctx.evidence),
};

/**
 * Probes in a row a QUORUM_AT_RISK whose sick members only ran out of time is looked at again,
 * each with a longer deadline (probeDeadlineMs), before it blocks: a loaded member or a slow
 * network times out as a dead member does, and a block waits for a person.
 */
export const SLOW_MEMBER_LOOKS = 2;

/** The members the gate counts as sick, when each of them only ran out of time on every path. */
function slowOnly(view: ClusterView, gate: GateResult): ClusterView['members'] | undefined {
  if (gate.reason !== 'QUORUM_AT_RISK') return undefined;
  const sick = view.members.filter((m) => gate.unhealthy.includes(m.id));
  return sick.length > 0 && sick.every(timedOutOnEveryPath) ? sick : undefined;
}

function refusedForSlowness(ctx: PlanContext, gate: GateResult, view: ClusterView): CheckResult | undefined {
  const sick = slowOnly(view, gate);
  if (!sick) return undefined;
  const { policy, samples, targetId } = ctx.input;
  const looks = inARow(samples, (sample) => slowOnly(sample, quorumGate(sample, targetId)) !== undefined);
  const names = listWords(sick.map(describeMember));
  const waited = Math.max(0, ...sick.flatMap((m) => m.paths.map((p) => p.latencyMs ?? 0)));
  if (looks > SLOW_MEMBER_LOOKS)
    return block(
      ctx,
      'QUORUM_AT_RISK',
      `${gate.message.replace(/\.$/, '')}: ${names} answered on no path through ${looks} probes in a row, the last waiting ${describeDuration(waited)}.`,
    );
  const { figures } = gate;
  return lookAgainAfterBackoff(
    ctx,
    'QUORUM_AT_RISK',
    `${names} answered on no path within ${describeDuration(waited)}, which a loaded member or a slow network does as a dead one does; removing ${ctx.name} now would leave ${figures.healthyAfter} of ${figures.votingAfter} voting members healthy, below the quorum of ${figures.needed}, so nothing is removed: the next probe waits ${describeDuration(probeDeadlineMs(policy, samples))} (look ${looks} of ${SLOW_MEMBER_LOOKS} before this blocks)`,
  );
}

const quorum: PlanCheck = {
  name: 'quorum-gate',
  run: (ctx) => {
    const gate = ctx.gate;
    if (gate?.ok) return 'pass';
    const slow = gate && ctx.view ? refusedForSlowness(ctx, gate, ctx.view) : undefined;
    return slow ?? block(ctx, gate?.reason ?? 'NO_QUORUM', gate?.message ?? sentence('The quorum gate could not run', 'blocked'));
  },
};

export const planChecks: readonly PlanCheck[] = [incidentDeadline, attemptBudget, maxRetry, retryPeriod, clusterReachable, targetFound, quorum];
