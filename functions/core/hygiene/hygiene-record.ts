// What leader hygiene keeps of one cluster between its periodic checks: the last raw scrape of
// each member (the next interval's deltas are taken from it), each member's interval samples the
// policy reads, and the moves asked for with what became of each. One record per cluster, written
// under a version, so two checks or two deliveries of one move never both act. Pure data.
import type { ReasonCode, MemberId } from '../common/index.ts';
import type { HygieneMove } from './hygiene-facts.ts';
import type { MemberScrape, MemberSignals } from './hygiene-signals.ts';

/**
 * A move's life: asked (LeaderDegraded published), moving (one delivery claimed it and calls
 * MoveLeader), then moved, failed, or one of the ends where nothing was called: expired (the
 * judgement was too old when delivered), superseded (leadership had already changed), would-move
 * (a dry run: said, nothing moved).
 */
export type HygieneMoveState = 'asked' | 'moving' | 'moved' | 'failed' | 'expired' | 'superseded' | 'would-move';

export interface HygieneMoveRecord extends HygieneMove {
  moveId: string;
  state: HygieneMoveState;
  /** The term the leader led in when the move was judged: a later term means leadership changed. */
  term: number;
  /** When a delivery claimed it (state moving), and when it ended. */
  claimedAt?: number;
  endedAt?: number;
  /** The term a verified move left the cluster in (term + 1). */
  newTerm?: number;
  /** How long MoveLeader took, for a move made. */
  tookMs?: number;
  /** The sentence of its end. */
  message?: string;
}

/** The last judgement said, so a hold is said when it starts, not every minute it lasts. */
export interface HygieneJudged {
  at: number;
  kind: string;
  reason: string;
  message: string;
}

export interface HygieneRecord {
  lastScrapes: Record<MemberId, MemberScrape>;
  /** Oldest first, trimmed to what the policy reads (hygiene-history.ts). */
  samples: Record<MemberId, MemberSignals[]>;
  /** Oldest first, trimmed to the last day (and always the last one). */
  moves: HygieneMoveRecord[];
  lastJudged?: HygieneJudged;
  /** The hold an alert was said for, while it lasts (hygiene-alert.ts): said once when it starts, once when it ends. */
  lastAlert?: HygieneAlertHeld;
}

/** A hold said as an alert: its reason, the members it is about (no target: the followers refused), and when it started. */
export interface HygieneAlertHeld {
  at: number;
  reason: ReasonCode;
  /** The members the judgement named (no target: the followers refused); absent when it named none. */
  members?: string[];
}

export const emptyHygieneRecord = (): HygieneRecord => ({ lastScrapes: {}, samples: {}, moves: [] });
