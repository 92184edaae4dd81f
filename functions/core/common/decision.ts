// What the planner can decide. Every outcome carries a stable reason code from the reason table.
import type { ReasonCode } from './reason-table.ts';
import type { MemberId, PathName } from './types.ts';

export type LeaderMove = 'not-needed' | 'moved' | 'skipped';

/** JSON-safe facts behind a decision: which member, which path, what etcd said. */
export type Evidence = Record<string, unknown>;

// The codes, what each means and which retries spend an attempt: the reason table.
export type { ReasonCode } from './reason-table.ts';

interface Explained {
  reason: ReasonCode;
  /** One plain sentence: which member, which path failed and how, what happens next. */
  message: string;
  evidence: Evidence;
}

export type Decision =
  | (Explained & { kind: 'approve'; leaderMove: LeaderMove })
  | (Explained & { kind: 'move-leader'; leaderId: MemberId; candidates: MemberId[]; paths: PathName[] })
  | (Explained & { kind: 'retry'; at: number; reprobeNow: boolean })
  | (Explained & { kind: 'block' })
  /** Nothing is left to do and nobody needs to act: the target recovered, or the report was withdrawn. */
  | (Explained & { kind: 'close' });

export type DecisionKind = Decision['kind'];

// Every decision names the rule that made it in evidence.decidedBy, so an operator reading an
// outcome can find the rule: a check of plan(), or one of the rules the steps apply on their own.
export const decidedBy = <D extends { evidence: Evidence }>(decision: D, rule: string): D => ({
  ...decision,
  evidence: { ...decision.evidence, decidedBy: rule },
});
