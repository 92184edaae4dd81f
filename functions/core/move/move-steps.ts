// The pure driver of the move-leader loop: given what was tried so far, what to do next.
// MoveLeader must reach the leader itself, so a path failure (refused, timeout, TLS, auth) moves
// to the next path for the same candidate, while an answer from etcd about the candidate moves
// to the next candidate over the path that reached the leader.
import {
  type Decision,
  type Evidence,
  type ReasonCode,
  NO_LEADER,
  type EtcdFailure,
  type MemberId,
  type PathName,
  type PathProbe,
  classifyFailure,
  type ClassificationRow,
} from '../common/index.ts';
import type { Policy } from '../policy/index.ts';
import { backoffRetryAt, describeResampleWait, resampleAt, WAITS_IN_A_ROW, unreachableBackoffAt, UNREACHABLE_BACKOFFS_IN_A_ROW } from '../waits/index.ts';
import { credentialProblem, describePath, describeTime } from '../view/index.ts';

export type MoveLeaderDecision = Extract<Decision, { kind: 'move-leader' }>;

export interface MoveAttempt {
  path: PathName;
  endpoint: string;
  candidateId: MemberId;
  at: number;
  outcome: 'moved' | EtcdFailure;
}

export interface MoveContext {
  policy: Policy;
  now: number;
  random: () => number;
  /** The incident's attempt, for backoff. */
  attempt: number;
  /** Immediate re-probes already spent; past policy.maxImmediateReprobes we back off instead. */
  immediateReprobes: number;
  /** Who a fresh probe says leads, after a 'verify' step. */
  verifiedLeaderId?: MemberId;
  /** When the incident opened: a look after the move never lands past its deadline. */
  openedAt: number;
  /** Resample waits in a row before the move (resample-wait.ts): a move that ends in an election goes on from them. */
  waitsInARow?: number;
  /** Back-offs in a row after moves that reached no leader (unreachable-move-wait.ts): each next one is longer. */
  unreachableBackoffs?: number;
}

export type MoveStep = { kind: 'try'; path: PathName; candidateId: MemberId } | { kind: 'verify'; candidateId: MemberId } | Decision;

interface Step {
  decision: MoveLeaderDecision;
  attempts: MoveAttempt[];
  ctx: MoveContext;
  name: (id: MemberId) => string;
  row?: ClassificationRow;
}

/** plan() puts "names" (id → "name (id)") in the evidence; fall back to the bare id. */
function namer(evidence: Evidence): (id: MemberId) => string {
  const names = evidence.names;
  return (id) => {
    if (names && typeof names === 'object' && id in names) {
      const n = (names as Record<string, unknown>)[id];
      if (typeof n === 'string') return n;
    }
    return id;
  };
}

function evidenceOf(s: Step): Evidence {
  const e: Evidence = { ...s.decision.evidence, moveAttempts: s.attempts };
  if (s.ctx.verifiedLeaderId !== undefined) e.verifiedLeaderId = s.ctx.verifiedLeaderId;
  if (s.row) e.classification = { reason: s.row.reason, class: s.row.class, category: s.row.category };
  return e;
}

const retry = (s: Step, reason: ReasonCode, at: number, reprobeNow: boolean, message: string): Decision => ({
  kind: 'retry',
  reason,
  at,
  reprobeNow,
  message,
  evidence: evidenceOf(s),
});

function backOff(s: Step, reason: ReasonCode, finding: string): Decision {
  const at = backoffRetryAt(s.ctx);
  return retry(s, reason, at, false, `${finding}; we back off and try again at ${describeTime(at)}.`);
}

/** Re-probe at once, a bounded number of times; then back off. */
function reprobe(s: Step, reason: ReasonCode, finding: string): Decision {
  const { immediateReprobes, policy, now } = s.ctx;
  if (immediateReprobes < policy.maxImmediateReprobes) {
    return retry(s, reason, now, true, `${finding}; we re-probe now.`);
  }
  return backOff(s, reason, `${finding}, and the ${policy.maxImmediateReprobes} immediate re-probes are spent`);
}

/**
 * No path reached the leader: re-probe at once a bounded number of times, then back off. The
 * retry spends no attempt, so the row of such back-offs, said in the evidence and passed on by the
 * re-probes, is what makes each back-off longer than the last.
 */
function leaderUnreachable(s: Step, finding: string): Decision {
  const { immediateReprobes, policy, now, openedAt, attempt, random } = s.ctx;
  const before = s.ctx.unreachableBackoffs ?? 0;
  const withRow = (d: Decision, row: number): Decision => ({ ...d, evidence: { ...d.evidence, [UNREACHABLE_BACKOFFS_IN_A_ROW]: row } });
  if (immediateReprobes < policy.maxImmediateReprobes) return withRow(retry(s, 'LEADER_UNREACHABLE', now, true, `${finding}; we re-probe now.`), before);
  const at = unreachableBackoffAt({ now, openedAt, attempt, before, random }, policy);
  const row = before > 0 ? ` (back-off ${before + 1} in a row)` : '';
  const spent = `${finding}, and the ${policy.maxImmediateReprobes} immediate re-probes are spent`;
  return withRow(retry(s, 'LEADER_UNREACHABLE', at, false, `${spent}; we back off and try again at ${describeTime(at)}${row}.`), before + 1);
}

function describeAttempt(s: Step, a: MoveAttempt, failure: EtcdFailure): string {
  return `Moving leadership from ${s.name(s.decision.leaderId)} to ${s.name(a.candidateId)} over ${a.path} ${a.endpoint} failed (${failure.message || failure.kind})`;
}

/** The leader's paths that failed in the probe behind the decision: why a later path carried the move. */
function failedBefore(evidence: Evidence): string {
  const judgement = evidence.judgement;
  const paths =
    typeof judgement === 'object' && judgement !== null && 'paths' in judgement && Array.isArray(judgement.paths) ? (judgement.paths as PathProbe[]) : [];
  const failed = paths.filter((p) => p.reachability !== 'ok');
  return failed.length === 0 ? '' : `, after ${failed.map(describePath).join('; ')}`;
}

function afterMoved(s: Step, last: MoveAttempt): MoveStep {
  const v = s.ctx.verifiedLeaderId;
  const moved = `Leadership moved from ${s.name(s.decision.leaderId)} to ${s.name(last.candidateId)} over ${last.path} ${last.endpoint}${failedBefore(s.decision.evidence)}`;
  if (v === undefined) return { kind: 'verify', candidateId: last.candidateId };
  if (v === last.candidateId) {
    return {
      kind: 'approve',
      leaderMove: 'moved',
      reason: 'LEADER_MOVED',
      message: `${moved} and ${s.name(v)} reports itself leader; removal of ${s.name(s.decision.leaderId)} is approved.`,
      evidence: evidenceOf(s),
    };
  }
  if (v === NO_LEADER) return noLeaderAfterMove(s, moved);
  return reprobe(s, 'LEADER_CHANGED', `${moved}, but a fresh probe finds ${s.name(v)} leading instead`);
}

/**
 * The move settled nothing: the row of looks it interrupted goes on, as the planner's resample
 * waits, so moves that keep ending in an election back off rather than repeat every election timeout.
 */
function noLeaderAfterMove(s: Step, moved: string): Decision {
  const { now, openedAt, policy } = s.ctx;
  const before = s.ctx.waitsInARow ?? 0;
  const at = resampleAt({ now, openedAt, before }, policy);
  const decision = retry(
    s,
    'ELECTION_IN_PROGRESS',
    at,
    false,
    `${moved}, but a fresh probe finds no leader; we look again after ${describeResampleWait(before, now, at, policy)}, at ${describeTime(at)}.`,
  );
  return { ...decision, evidence: { ...decision.evidence, [WAITS_IN_A_ROW]: before + 1 } };
}

/** Every path to the leader failed for this candidate: credentials block, anything else re-probes. */
function pathsExhausted(s: Step, last: MoveAttempt): Decision {
  const tried: PathProbe[] = [];
  for (let i = s.attempts.length - 1; i >= 0; i -= 1) {
    const a = s.attempts[i]!;
    if (a.candidateId !== last.candidateId || a.outcome === 'moved') break;
    const row = classifyFailure(a.outcome);
    if (row.class !== 'next-path') break;
    const reachability = row.reason === 'AUTH_FAILED' ? 'auth' : row.reason === 'TLS_FAILED' ? 'tls' : a.outcome.kind;
    tried.unshift({ path: a.path, endpoint: a.endpoint, reachability, latencyMs: 0, failure: { ...a.outcome, kind: reachability } });
  }
  const leader = s.name(s.decision.leaderId);
  const problem = credentialProblem(tried);
  if (problem) {
    return {
      kind: 'block',
      reason: problem.reason,
      message: `Every path to the leader ${leader} fails on credentials (${problem.failures}); blocked, fix ${problem.credential}.`,
      evidence: evidenceOf(s),
    };
  }
  return leaderUnreachable(s, `Every path to the leader ${leader} failed (${tried.map(describePath).join('; ')}), so the evidence rule must judge it`);
}

export function nextMoveStep(decision: MoveLeaderDecision, attempts: MoveAttempt[], ctx: MoveContext): MoveStep {
  const s: Step = { decision, attempts, ctx, name: namer(decision.evidence) };
  const { candidates, paths } = decision;
  const leader = s.name(decision.leaderId);
  if (candidates.length === 0) {
    return {
      kind: 'block',
      reason: 'NO_MOVE_CANDIDATE',
      message: `No member can take leadership from ${leader}; blocked until one is healthy.`,
      evidence: evidenceOf(s),
    };
  }
  if (paths.length === 0) return leaderUnreachable(s, `No path to the leader ${leader} is known`);

  const last = attempts.at(-1);
  if (!last) return { kind: 'try', path: paths[0]!, candidateId: candidates[0]! };
  if (last.outcome === 'moved') return afterMoved(s, last);

  const ci = candidates.indexOf(last.candidateId);
  const pi = paths.indexOf(last.path);
  if (ci < 0 || pi < 0) throw new RangeError(`move attempt ${last.path} → ${last.candidateId} is not part of the decision`);

  const row = classifyFailure(last.outcome);
  s.row = row;
  const finding = describeAttempt(s, last, last.outcome);
  switch (row.class) {
    case 'next-path':
      return pi + 1 < paths.length ? { kind: 'try', path: paths[pi + 1]!, candidateId: last.candidateId } : pathsExhausted(s, last);
    case 'next-candidate':
      if (ci + 1 < candidates.length) return { kind: 'try', path: last.path, candidateId: candidates[ci + 1]! };
      return backOff(s, row.reason, `${finding}, and no candidate is left`);
    case 'retry-now':
    case 'decide':
      return reprobe(s, row.reason, finding);
    case 'back-off':
      return backOff(s, row.reason, finding);
    case 'block':
      return { kind: 'block', reason: row.reason, message: `${finding}; ${row.next}.`, evidence: evidenceOf(s) };
  }
}
