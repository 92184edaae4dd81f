// A hygiene move's record, pure: the move a check asks for, what a delivery of LeaderDegraded
// may do with it (claim it once, or say it is over), and its end. Only a move the cluster's own
// record keeps as asked is ever made, so a forged or replayed event moves nothing.
import type { HygieneMoveRecord, HygieneMoveState, HygieneRecord } from './hygiene-record.ts';
import type { Policy } from '../policy/index.ts';

/** Asked or claimed: a move under way, which holds every new judgement back. */
export const isOpenMove = (m: HygieneMoveRecord): boolean => m.state === 'asked' || m.state === 'moving';

export const openMoveOf = (record: HygieneRecord): HygieneMoveRecord | undefined => record.moves.find(isOpenMove);

export type MoveClaim =
  /** Unknown to the record: never made. */
  | { kind: 'unknown' }
  /** Over already (a redelivery): its end is said again, nothing is done. */
  | { kind: 'ended'; move: HygieneMoveRecord }
  /** Another delivery holds it and its lease runs. */
  | { kind: 'claimed-elsewhere'; move: HygieneMoveRecord }
  /** Judged too long ago to act on. */
  | { kind: 'expired'; move: HygieneMoveRecord }
  /** This delivery may make it (a claim whose holder died past its lease is taken over). */
  | { kind: 'claim'; move: HygieneMoveRecord };

/** How long a claim holds: a delivery that died mid-move frees it for a redelivery after this. */
export const claimLeaseMs = (policy: Pick<Policy, 'hygiene' | 'electionTimeoutMs'>): number => policy.hygiene.moveExpiryMs;

export function claimOf(record: HygieneRecord, moveId: string, now: number, policy: Pick<Policy, 'hygiene' | 'electionTimeoutMs'>): MoveClaim {
  const move = record.moves.find((m) => m.moveId === moveId);
  if (!move) return { kind: 'unknown' };
  if (!isOpenMove(move)) return { kind: 'ended', move };
  if (move.state === 'moving' && now - (move.claimedAt ?? 0) < claimLeaseMs(policy)) return { kind: 'claimed-elsewhere', move };
  // A claim taken over is not fresh: a move dead mid-call may have moved, which the look says.
  if (move.state === 'asked' && now - move.at > policy.hygiene.moveExpiryMs) return { kind: 'expired', move };
  return { kind: 'claim', move };
}

/** The record with one move replaced by `patch` applied to it. */
export const withMove = (record: HygieneRecord, moveId: string, patch: Partial<HygieneMoveRecord>): HygieneRecord => ({
  ...record,
  moves: record.moves.map((m) => (m.moveId === moveId ? { ...m, ...patch } : m)),
});

export type EndedState = Exclude<HygieneMoveState, 'asked' | 'moving'>;

export const endMove = (
  record: HygieneRecord,
  moveId: string,
  state: EndedState,
  now: number,
  facts: Partial<Pick<HygieneMoveRecord, 'message' | 'newTerm' | 'tookMs'>>,
): HygieneRecord => withMove(record, moveId, { state, endedAt: now, ...facts });

/**
 * The record with its stale open moves ended: one asked and never delivered past its expiry
 * (expired, nothing was called), one claimed by a delivery that died past its lease (failed: it
 * may have moved; the look the next judgement takes says who leads, and it counts as a transfer).
 */
export function staleMovesEnded(record: HygieneRecord, now: number, policy: Pick<Policy, 'hygiene' | 'electionTimeoutMs'>): HygieneRecord {
  let ended = record;
  for (const m of record.moves) {
    if (m.state === 'asked' && now - m.at > policy.hygiene.moveExpiryMs) {
      ended = endMove(ended, m.moveId, 'expired', now, {
        message: `The move from ${m.from} to ${m.to} was never delivered within ${policy.hygiene.moveExpiryMs} ms of its judgement: not made.`,
      });
    } else if (m.state === 'moving' && now - (m.claimedAt ?? 0) >= claimLeaseMs(policy)) {
      ended = endMove(ended, m.moveId, 'failed', now, {
        message: `The delivery moving leadership from ${m.from} to ${m.to} stopped mid-move: whether it moved is what the next look says.`,
      });
    }
  }
  return ended;
}
