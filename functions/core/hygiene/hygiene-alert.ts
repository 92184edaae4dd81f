// Whether a leader-hygiene check says an alert: a hold a person should look at is said once when
// it starts and once when it ends, not each check it lasts. Unchanged means the same reason and,
// for no target, the same followers refused: figures moving inside a hold make no new hold, and
// neither does the time since it was said. A judgement that tells nothing of the hold (not judged,
// degrading, a cooldown, a move pending) keeps it. Pure: the check loads the record's hold and
// writes back what this returns.
import type { ReasonCode } from '../common/index.ts';
import { describeDuration, describeTime } from '../view/index.ts';
import type { HygieneAlertHeld } from './hygiene-record.ts';

/** What alertSayings reads of a judgement. */
export interface AlertJudged {
  kind: string;
  reason: ReasonCode;
  message: string;
  evidence: Record<string, unknown>;
  alert?: boolean;
  members?: readonly string[];
}

export interface AlertSaying {
  phase: 'started' | 'ended';
  reason: ReasonCode;
  message: string;
  evidence: Record<string, unknown>;
}

/** Judgements that show a hold is over: the leader well again, or a target found (a move judged, even one a pause or an incident holds back). */
const ENDS_A_HOLD: readonly ReasonCode[] = ['HYGIENE_LEADER_HEALTHY', 'HYGIENE_RECOVERED', 'LEADER_DEGRADED', 'HYGIENE_PAUSED', 'HYGIENE_INCIDENT_OPEN'];

const sorted = (ids: readonly string[]): string[] => [...ids].sort();

/** The same members, or none named on either side. */
const sameMembers = (held: readonly string[] | undefined, now: readonly string[] | undefined): boolean =>
  JSON.stringify(held && sorted(held)) === JSON.stringify(now && sorted(now));

function ended(held: HygieneAlertHeld, judged: AlertJudged, now: number): AlertSaying {
  return {
    phase: 'ended',
    reason: held.reason,
    message: `The ${held.reason} hold said at ${describeTime(held.at)} is over after ${describeDuration(now - held.at)}: ${judged.message}`,
    evidence: { startedAt: describeTime(held.at), endedBy: judged.reason, ...(held.members ? { members: held.members } : {}) },
  };
}

/** What this judgement says of the held alert (nothing, its end, a new one's start, or both), and the hold to keep. */
export function alertSayings(held: HygieneAlertHeld | undefined, judged: AlertJudged, now: number): { say: AlertSaying[]; held: HygieneAlertHeld | undefined } {
  const alerting = judged.kind === 'hold' && judged.alert === true;
  const members = judged.members && sorted(judged.members);
  if (alerting && held && held.reason === judged.reason && sameMembers(held.members, members)) {
    return { say: [], held };
  }
  const ends = held !== undefined && (alerting || ENDS_A_HOLD.includes(judged.reason));
  const say = ends ? [ended(held, judged, now)] : [];
  if (!alerting) return { say, held: ends ? undefined : held };
  return {
    say: [...say, { phase: 'started', reason: judged.reason, message: judged.message, evidence: judged.evidence }],
    held: { at: now, reason: judged.reason, ...(members ? { members } : {}) },
  };
}
