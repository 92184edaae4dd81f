// The standard conditions (metav1.Condition) of an EtcdRemediationRequest, from its status. Pure.
// Four types, each True, False or Unknown from the phase: Ready (nothing is left to do and the
// cluster is whole: Completed, or Recovered with nothing removed), Remediated (the member was
// removed), Blocked (a safety rule or a failure stopped it: a person must act) and Paused (held:
// Cluster API paused or short-circuited it, or the remediator's own pause or storm guard). Each
// one's reason is the last decision's reason code in CamelCase, as metav1.Condition wants
// (LEADER_MOVED → LeaderMoved), or the phase when there is none; its message, the status's. As
// apimachinery's meta.SetStatusCondition does, lastTransitionTime moves only when a status does.
import { reasonCodes, reasonRow, type ReasonCode } from '../common/index.ts';

export const CONDITION_TYPES = ['Ready', 'Remediated', 'Blocked', 'Paused'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** What the conditions are read from: a request's status (its phase as the CRD's enum says it). */
export interface ConditionSource {
  phase: string;
  reasonCode?: string | undefined;
  message?: string | undefined;
}

/** Held back, not stopped: Cluster API's word, or the remediator's own pause and storm guard. */
const PAUSING: readonly string[] = ['CLUSTER_PAUSED', 'REMEDIATION_NOT_ALLOWED', 'COMPETING_REMEDIATION', 'PAUSED', 'FLEET_STORM'];

const isCloseReason = (code: string | undefined): boolean =>
  code !== undefined && (reasonCodes as readonly string[]).includes(code) && reasonRow(code as ReasonCode).outcomes.includes('close');

/** A reason code (or any word) as metav1.Condition's reason: `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`. */
export function conditionReason(code: string): string {
  const words = code.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
  const camel = /[a-z]/.test(code) && !code.includes('_') ? words.join('') : words.map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()).join('');
  // It must start with a letter; a code that does not (none does today) is kept readable behind one.
  const reason = /^[A-Za-z]/.test(camel) ? camel : `R${camel}`;
  return reason === 'R' ? 'Unknown' : reason;
}

function statusesOf({ phase, reasonCode }: ConditionSource): Record<ConditionType, ConditionStatus> {
  const paused = (phase === 'Pending' || phase === 'Waiting') && reasonCode !== undefined && PAUSING.includes(reasonCode);
  const remediated: ConditionStatus =
    phase === 'AwaitingReplacement' || (phase === 'Completed' && !isCloseReason(reasonCode)) ? 'True' : phase === 'Failed' ? 'Unknown' : 'False';
  return {
    Ready: phase === 'Completed' || phase === 'Recovered' ? 'True' : 'False',
    Remediated: remediated,
    Blocked: phase === 'Blocked' || phase === 'Failed' ? 'True' : 'False',
    Paused: paused ? 'True' : 'False',
  };
}

/**
 * The request's conditions for `status` at `now`, each type's lastTransitionTime kept from
 * `previous` while its status stays; conditions of other types in `previous` are kept as they are.
 */
export function conditionsOf(status: ConditionSource, previous: readonly Condition[], at: { now: string; generation?: number | undefined }): Condition[] {
  const statuses = statusesOf(status);
  const reason = conditionReason(status.reasonCode ?? status.phase);
  const message = status.message ?? `the request is ${status.phase}`;
  const ours = CONDITION_TYPES.map((type): Condition => {
    const before = previous.find((c) => c.type === type);
    const lastTransitionTime = before && before.status === statuses[type] ? before.lastTransitionTime : at.now;
    return { type, status: statuses[type], reason, message, lastTransitionTime, ...(at.generation === undefined ? {} : { observedGeneration: at.generation }) };
  });
  const others = previous.filter((c) => !(CONDITION_TYPES as readonly string[]).includes(c.type));
  return [...ours, ...others];
}

/**
 * The Machine's ExternallyRemediated condition (Cluster API v1beta2, set False WaitingForRemediation
 * by MHC when it creates the request and left to the external remediator): the request's
 * Remediated condition under the Machine's type, so `clusterctl describe` says what we did and why.
 * Its message is cut to what a condition message holds (32768 bytes).
 */
export function externallyRemediatedOf(conditions: readonly Condition[]): Omit<Condition, 'observedGeneration'> | undefined {
  const remediated = conditions.find((c) => c.type === 'Remediated');
  if (!remediated) return undefined;
  return {
    type: 'ExternallyRemediated',
    status: remediated.status,
    reason: remediated.reason,
    message: remediated.message.slice(0, 32_768),
    lastTransitionTime: remediated.lastTransitionTime,
  };
}
