// What plan() is given, and the facts it derives once before any check runs.
import type { Decision, Evidence, LeaderMove, ReasonCode, MemberId } from '../common/index.ts';
import type { FleetFacts } from '../fleet/index.ts';
import type { DefragmentationInFlight, DefragmentationSpan, MaintenanceRunEnded } from '../maintenance/index.ts';
import type { Policy } from '../policy/index.ts';
import { describeMember, type ClusterView, type MemberView, judgeLeader, type CarriedStreak, type LeaderJudgement, hostGoneFinding } from '../view/index.ts';
import { quorumGate, type GateResult } from './quorum-gate.ts';
import { backoffRetryAt, retryAfterBackoff, type BackoffInput, passingRowOn } from '../waits/index.ts';

export interface PlanInput {
  /** Oldest first; the last is the current view. */
  samples: ClusterView[];
  targetId: MemberId;
  incident: {
    openedAt: number;
    /** Evaluations already made for this incident: 0 on the first. */
    attempt: number;
    /** Immediate re-probes already spent on a changing leader. */
    immediateReprobes: number;
    /** The leader-unreachable streak carried from views no longer kept. */
    leaderUnreachable?: CarriedStreak;
    /** Members being remediated themselves: never move leadership to them. */
    excludeCandidates?: MemberId[];
    /** Waits that only looked again, in a row, up to now (resample-wait.ts): each next one is longer. */
    waitsInARow?: number;
  };
  /** KCP parity: the target's remediation history. */
  remediation: { lastRemediatedAt?: number; retryCount: number };
  policy: Policy;
  now: number;
  random: () => number;
  /**
   * The target's Node or Machine is known gone ("its Node cp-2 no longer exists"): nothing is
   * left to move leadership from. Derived from the current view's host evidence when unset.
   */
  targetGone?: string;
  /**
   * The cluster's maintenance: its last run, when one ended (a NOSPACE it could not clear blocks the
   * removal), the defragmentation claimed now (that member counts as down), and when the run in
   * flight stalled each member (a look then saw it down for that alone).
   */
  maintenance?: {
    lastRun?: Pick<MaintenanceRunEnded, 'reason' | 'outcome' | 'endReason' | 'message' | 'endedAt'>;
    inFlight?: DefragmentationInFlight;
    spans?: DefragmentationSpan[];
  };
  /** The fleet's pauses and storm facts (fleet-gate.ts): without them, no fleet gate is applied. */
  fleet?: { clusterId: string; facts: FleetFacts; lastDecision?: Decision | undefined };
}

export interface PlanContext {
  input: PlanInput;
  view?: ClusterView;
  target?: MemberView;
  /** The target as a sentence names it. */
  name: string;
  gate?: GateResult;
  /** Only for a voting target. */
  judgement?: LeaderJudgement;
  evidence: Evidence;
  /** Why the target's machine is known gone, when it is. */
  targetGone?: string;
}

export function buildPlanContext(input: PlanInput): PlanContext {
  const view = input.samples.at(-1);
  const target = view?.members.find((m) => m.id === input.targetId);
  const gate = view ? quorumGate(view, input.targetId) : undefined;
  const judgement =
    target && !target.isLearner ? judgeLeader(input.samples, input.targetId, input.policy.electionTimeoutMs, input.incident.leaderUnreachable) : undefined;
  const names = Object.fromEntries((view?.members ?? []).map((m) => [m.id, describeMember(m)]));
  const evidence: Evidence = {
    targetId: input.targetId,
    attempt: input.incident.attempt,
    immediateReprobes: input.incident.immediateReprobes,
    names,
  };
  if (view) evidence.reports = view.leader.reports;
  // Without it, a decision made on the direct path alone would not say the kube paths were not there to try.
  if (view?.pathLookFailure) evidence.pathLookFailure = view.pathLookFailure;
  if (gate) evidence.gate = { reason: gate.reason, ...gate.figures, unhealthy: gate.unhealthy, notReady: gate.notReady };
  if (judgement) {
    const { message: _message, ...facts } = judgement;
    evidence.judgement = facts;
  }
  const targetGone = input.targetGone ?? hostGoneFinding(view, input.targetId);
  if (targetGone !== undefined) evidence.targetGone = targetGone;
  const ctx: PlanContext = { input, name: target ? describeMember(target) : input.targetId, evidence };
  if (targetGone !== undefined) ctx.targetGone = targetGone;
  if (view) ctx.view = view;
  if (target) ctx.target = target;
  if (gate) ctx.gate = gate;
  if (judgement) ctx.judgement = judgement;
  return ctx;
}

/** A finding and what happens next, as one sentence. */
export const sentence = (finding: string, next: string): string => `${finding.replace(/[.\s]+$/, '')}; ${next}.`;

export const block = (ctx: PlanContext, reason: ReasonCode, message: string): Decision => ({
  kind: 'block',
  reason,
  message,
  evidence: ctx.evidence,
});

export const close = (ctx: PlanContext, reason: ReasonCode, message: string): Decision => ({
  kind: 'close',
  reason,
  message,
  evidence: ctx.evidence,
});

/** An approval carries the row of waits it was given: remediate's look under the lock may go on from it. */
export const approve = (ctx: PlanContext, reason: ReasonCode, leaderMove: LeaderMove, message: string): Decision => ({
  kind: 'approve',
  leaderMove,
  reason,
  message,
  evidence: passingRowOn(ctx.evidence, ctx.input.incident.waitsInARow ?? 0),
});

export const retryAt = (ctx: PlanContext, reason: ReasonCode, at: number, message: string, reprobeNow = false): Decision => ({
  kind: 'retry',
  at,
  reprobeNow,
  reason,
  message,
  evidence: ctx.evidence,
});

/** The planner's backoff input: the incident's attempts of the budget spent, now. */
export const backoffOf = (ctx: PlanContext): BackoffInput => ({
  now: ctx.input.now,
  attempt: ctx.input.incident.attempt,
  policy: ctx.input.policy,
  random: ctx.input.random,
});

/** Retry after the incident's backoff, saying when. */
export const lookAgainAfterBackoff = (ctx: PlanContext, reason: ReasonCode, finding: string): Decision =>
  retryAfterBackoff(reason, backoffRetryAt(backoffOf(ctx)), (when) => sentence(finding, `we look again at ${when}`), ctx.evidence);
