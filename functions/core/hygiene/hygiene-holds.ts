// What holds leader hygiene back whatever the figures say, pure: a move already asked for and not
// over, a pause of the cluster or the fleet, a fleet storm, an incident open on the cluster
// (remediation owns its leadership then). The check loads the facts; this says the hold and its sentence.
import { describeTime, lowerFirst } from '../view/index.ts';
import type { FleetMark } from '../fleet/index.ts';
import type { HygieneDecision } from './hygiene-facts.ts';
import type { HygieneMoveRecord } from './hygiene-record.ts';

export interface HygieneHold {
  kind: 'hold';
  alert: boolean;
  reason: 'HYGIENE_PAUSED' | 'HYGIENE_INCIDENT_OPEN' | 'HYGIENE_MOVE_PENDING' | 'FLEET_STORM';
  message: string;
  evidence: Record<string, unknown>;
}

/** A decision of the check: the policy's, or one of its holds. */
export type HygieneVerdict = HygieneDecision | HygieneHold;

export interface HoldFacts {
  clusterId: string;
  /** The move asked for and not over, if any. */
  pending?: HygieneMoveRecord | undefined;
  /** The pause that holds the cluster, read only when the verdict would move. */
  paused?: { mark: FleetMark; fleetWide: boolean } | undefined;
  /** Incidents open on the cluster, read only when the verdict would move. */
  openIncidents?: readonly string[];
  /** The fleet storm that holds the cluster, said (fleet-words' stormHoldsMessage), read only when the verdict would move. */
  storm?: string | undefined;
}

/** Whether the verdict would move leadership: only then are the pause and the open incidents read. */
export const wouldMove = (verdict: HygieneDecision): boolean => verdict.kind === 'move' || verdict.kind === 'would-move';

export function heldBack(verdict: HygieneDecision, facts: HoldFacts): HygieneVerdict {
  const { pending, paused, openIncidents = [], clusterId, storm } = facts;
  if (pending) {
    return {
      kind: 'hold',
      alert: false,
      reason: 'HYGIENE_MOVE_PENDING',
      message: `The move of leadership from ${pending.from} to ${pending.to} asked for at ${describeTime(pending.at)} is not over (${pending.state}): nothing new is judged until it is.`,
      evidence: { moveId: pending.moveId, state: pending.state },
    };
  }
  if (!wouldMove(verdict)) return verdict;
  if (paused) {
    const { mark, fleetWide } = paused;
    return {
      kind: 'hold',
      alert: false,
      reason: 'HYGIENE_PAUSED',
      message: `${verdict.message}; but ${fleetWide ? 'the fleet' : clusterId} is paused since ${describeTime(mark.at)} by ${mark.by} (${mark.why}): nothing is moved until a person resumes.`,
      evidence: verdict.evidence,
    };
  }
  if (storm) return { kind: 'hold', alert: false, reason: 'FLEET_STORM', message: `${verdict.message}; but ${lowerFirst(storm)}`, evidence: verdict.evidence };
  if (openIncidents.length > 0) {
    return {
      kind: 'hold',
      alert: false,
      reason: 'HYGIENE_INCIDENT_OPEN',
      message: `${verdict.message}; but incident ${openIncidents[0]} is open on ${clusterId}: remediation owns its leadership, so nothing is moved.`,
      evidence: { ...verdict.evidence, incidents: [...openIncidents] },
    };
  }
  return verdict;
}
