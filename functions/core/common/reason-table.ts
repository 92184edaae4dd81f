// THE reason table: every stable reason code, the outcomes that carry it, whether a retry with it
// spends an attempt of the budget, and what it means, as data. ReasonCode, the events' zod enum
// and waitingReasons are derived from it, so a code used anywhere must be written here first.
import type { DecisionKind } from './decision.ts';

/**
 * A decision's kind ('close' ends an incident with nothing to do), 'fail' (the incident ends
 * failed), 'gate' (a quorum-gate verdict only, never an outcome) or 'replacement' (said by the
 * check of a removal's replacement, and by the cleanup of a stuck learner: replacement-check.ts)
 * or 'hygiene' (a verdict of leader hygiene on a healthy-enough cluster, no incident: leader-hygiene.ts),
 * or 'maintenance' (a maintenance plan's verdict: core/maintenance).
 */
export type ReasonOutcome = DecisionKind | 'fail' | 'gate' | 'replacement' | 'hygiene' | 'maintenance';

interface RetryRow {
  /** The outcomes that carry this code, the usual one first; one of them is 'retry'. */
  outcomes: readonly ReasonOutcome[];
  /**
   * False for retries that wait for evidence or for a window to pass, not for a failed action to
   * be tried again: those spend no attempt, and the incident deadline bounds them.
   */
  spendsAttempt: boolean;
  /** Retried one election timeout later, when a fresh sample can settle it; longer each time in a row (resample-wait.ts). */
  settledByResample?: true;
  /** One line: what the code means. */
  description: string;
}

interface OutcomeRow {
  outcomes: readonly Exclude<ReasonOutcome, 'retry'>[];
  spendsAttempt?: never;
  settledByResample?: never;
  description: string;
}

/** A row that may be a retry must say whether it spends an attempt: tsc holds every row to that. */
export type ReasonRow = RetryRow | OutcomeRow;

export const reasonTable = {
  // approve
  TARGET_IS_FOLLOWER: { outcomes: ['approve'], description: 'The target is a follower: removal is approved without a leader move.' },
  TARGET_IS_LEARNER: {
    outcomes: ['approve'],
    description: 'The target is a learner, which neither leads nor votes: removal is approved without a leader move.',
  },
  LEADER_MOVED: { outcomes: ['approve'], description: 'Leadership was moved off the target and the new leader confirmed it: removal is approved.' },
  LEADER_UNREACHABLE_PAST_GRACE: {
    outcomes: ['approve'],
    description: 'The leader stayed unreachable on every path past the grace window with quorum safe: removal is approved without a move.',
  },
  MEMBER_ALREADY_REMOVED: {
    outcomes: ['approve'],
    description: 'The target Machine exists but no etcd member runs on it any more: it goes straight to replacement, as KCP does.',
  },
  LEADER_GONE: { outcomes: ['approve'], description: "The leader's Node or Machine is gone: removal is approved without a move." },
  QUORUM_SAFE: { outcomes: ['gate'], description: 'The quorum gate passed: the rest of the members still make a quorum.' },
  // move first
  LEADER_MOVE_REQUIRED: { outcomes: ['move-leader'], description: 'The target leads and answers: leadership must move off it before it is removed.' },
  // retry
  LEADER_UNREACHABLE: {
    outcomes: ['retry'],
    spendsAttempt: false,
    description: 'The leader is unreachable on every path: wait out the grace window, or let the evidence rule judge it.',
  },
  LEADER_UNREACHABLE_UNCONFIRMED: {
    outcomes: ['retry'],
    spendsAttempt: false,
    settledByResample: true,
    description:
      'The leader looks unreachable, but samples one election timeout apart have not confirmed it yet: look again after one election timeout, twice as long each look in a row, up to the backoff cap.',
  },
  ELECTION_IN_PROGRESS: {
    outcomes: ['retry'],
    spendsAttempt: false,
    settledByResample: true,
    description:
      'No leader is settled (none, disagreement or a moving term): look again after one election timeout, twice as long each look in a row, up to the backoff cap.',
  },
  LEADER_CHANGED: {
    outcomes: ['retry'],
    spendsAttempt: true,
    description: 'Another member leads now, or etcd said "not leader": re-probe now, a bounded number of times.',
  },
  TRANSFEREE_UNFIT: {
    outcomes: ['retry'],
    spendsAttempt: true,
    description: 'etcd refused the candidate as transferee ("bad leader transferee"): next candidate, then back off.',
  },
  LEADER_TRANSFER_TIMEOUT: { outcomes: ['retry'], spendsAttempt: true, description: 'The leader transfer took too long: next candidate, then back off.' },
  ETCD_TRANSIENT: {
    outcomes: ['retry'],
    spendsAttempt: true,
    description: 'etcd answered with a passing condition (no leader, unhealthy cluster, request timed out): back off.',
  },
  PATH_REFUSED: { outcomes: ['retry'], spendsAttempt: true, description: 'The connection was refused on every path tried: back off.' },
  PATH_TIMEOUT: { outcomes: ['retry'], spendsAttempt: true, description: 'The call timed out on every path tried: back off.' },
  RELAY_BINARY_MISSING: {
    outcomes: ['retry'],
    spendsAttempt: true,
    description:
      "The exec relay's etcdctl is not in the relay pod's image: the next path is tried, and the relay serves only once --relay-binary (relayBinary) names the etcdctl the image has.",
  },
  REMEDIATION_RETRY_PERIOD: {
    outcomes: ['retry'],
    spendsAttempt: false,
    description: "The target was remediated less than the retry period ago (KCP retryPeriod): wait for the period's end.",
  },
  UNKNOWN_ERROR: { outcomes: ['retry'], spendsAttempt: true, description: 'etcd failed in a way the classification table does not name: back off.' },
  NO_HEALTHY_MEMBER: {
    outcomes: ['retry'],
    spendsAttempt: true,
    description: 'No healthy member other than the target was left to send MemberRemove through: back off.',
  },
  CLUSTER_UNREACHABLE: { outcomes: ['retry'], spendsAttempt: true, description: 'No member of the cluster answered, so nothing can be judged: back off.' },
  MEMBER_NOT_FOUND: {
    outcomes: ['retry'],
    spendsAttempt: true,
    description: 'etcd said "member not found" during a move: the membership changed, so decide again from a fresh probe.',
  },
  // block
  QUORUM_AT_RISK: {
    outcomes: ['retry', 'block'],
    spendsAttempt: true,
    description:
      'Removing the target would leave too few healthy voting members for a quorum. Looked at again with a longer probe while the members short of it only timed out; blocked once they stay so, or at once when one refused or answered unhealthy.',
  },
  NO_QUORUM: { outcomes: ['block'], description: 'The cluster has no quorum now: removing a member cannot help.' },
  LAST_MEMBER: { outcomes: ['block'], description: 'The target is the last voting member: removing it would destroy the cluster.' },
  MEMBER_NOT_READY: {
    outcomes: ['block'],
    description:
      'A learner other than the target, or a member that never started, is in the cluster: as KCP, no member is removed while the membership changes.',
  },
  CLUSTER_MISMATCH: {
    outcomes: ['block'],
    description: 'The endpoints answered with more than one etcd cluster_id: they are not one cluster, so nothing is judged or removed.',
  },
  CLUSTER_TOO_LARGE: {
    outcomes: ['block'],
    description: 'The etcd cluster lists more members than a view holds (VIEW_LIMITS.members): nothing is judged or removed.',
  },
  TARGET_NOT_FOUND: { outcomes: ['block'], description: 'The member list answered and no member is the target: it may already be removed.' },
  AMBIGUOUS_TARGET: {
    outcomes: ['block'],
    description: 'The selector names more than one member (a shared name, alias, Machine or Node): nothing is removed until it is given by id.',
  },
  NOT_CONTROL_PLANE: {
    outcomes: ['block'],
    description:
      "The target names a Machine or Node that is none of the cluster's control-plane Machines (a worker, say): no etcd member runs there, and nothing is done to it.",
  },
  AUTH_FAILED: {
    outcomes: ['block', 'retry'],
    spendsAttempt: true,
    description: 'Every path rejects our credentials: block and name the etcd user; a MemberRemove refused so by every member backs off.',
  },
  TLS_FAILED: {
    outcomes: ['block', 'retry'],
    spendsAttempt: true,
    description: 'Every path fails the TLS handshake: block and name the certificate; a MemberRemove failing so on every member backs off.',
  },
  NO_MOVE_CANDIDATE: { outcomes: ['block'], description: 'The target leads, but no other voting member is reachable, healthy and free to take over.' },
  REMOVE_WITHOUT_MOVE_DISABLED: { outcomes: ['block'], description: 'The leader cannot hand over, and policy forbids removing a leader without a move.' },
  NOT_ENOUGH_STARTED_MEMBERS: { outcomes: ['block'], description: 'etcd refuses the membership change until more members are started.' },
  ATTEMPTS_EXHAUSTED: { outcomes: ['block'], description: "The incident's attempt budget (maxAttempts) is spent." },
  INCIDENT_DEADLINE_EXCEEDED: { outcomes: ['block'], description: 'The incident has been open past its deadline.' },
  MAX_RETRY_EXCEEDED: { outcomes: ['block'], description: 'The target was remediated more than maxRetry times within the healthy period (KCP maxRetry).' },
  DUPLICATE_INCIDENT: {
    outcomes: ['close'],
    description:
      'Another incident is remediating the same member, or has removed it (reported by another name or id, or by another remediator): this one ends, recorded there.',
  },
  REPLACEMENT_PENDING: {
    outcomes: ['block'],
    description:
      'The cluster is still below the size it had before the last removal: no other member is removed until its replacement joins, unless policy allows shrinking.',
  },
  DISRUPTION_IN_PROGRESS: {
    outcomes: ['retry', 'maintenance'],
    spendsAttempt: false,
    description:
      "Another disruption is under way on a member the removal's (or a defragmentation's) quorum would rest on (its Node cordoned or draining, its Machine deleting, a Machine being created, a member being defragmented): with it down too, no quorum would be left, so nothing is removed or defragmented until that disruption ends.",
  },
  // operational
  CLUSTER_LOCKED: { outcomes: ['retry'], spendsAttempt: false, description: 'Another remediation holds the cluster lock: wait for it.' },
  LOCK_UNAVAILABLE: {
    outcomes: ['retry'],
    spendsAttempt: true,
    description:
      'etcd did not answer for the cluster lock or the removal record (a timeout, an unavailable member, an election): no member is removed without both, so back off and try again.',
  },
  NOSPACE_CLEARING: {
    outcomes: ['retry'],
    spendsAttempt: false,
    description:
      'A NOSPACE alarm stands and maintenance clears it (maintenance.clearNoSpace): compact, defragment one member at a time, the leader last after a move, disarm; the removal waits for writes to be accepted again.',
  },
  ETCD_NO_SPACE: {
    outcomes: ['block'],
    description:
      'A NOSPACE alarm stands: etcd refuses every write, so the cluster lock and the removal record cannot be written, and nothing is removed until a person frees space and disarms the alarm.',
  },
  NO_SHARED_LOCK: {
    outcomes: ['block'],
    description:
      'No member is reachable over a path that can hold the cluster lock (direct or port-forward), and the policy names no single-remediator cluster: nothing is removed.',
  },
  DRY_RUN: { outcomes: ['block'], description: 'The policy is a dry run: what would be done is said, and nothing is done.' },
  RUNTIME_RESUMED: {
    outcomes: ['retry', 'approve'],
    spendsAttempt: false,
    description: 'The runtime resumed an incident a crash or restart left without a next step.',
  },
  SNAPSHOT_FAILED: {
    outcomes: ['block', 'retry'],
    spendsAttempt: true,
    description:
      'The snapshot the policy requires before a removal could not be taken: nothing was removed. Blocked, but for a transient etcd failure (a timeout, no leader), which is tried again a bounded number of times first.',
  },
  TARGET_RECOVERED: {
    outcomes: ['close'],
    description:
      'The leader was seen unreachable on every path, then answered again, healthy, before the grace window ended: the incident closes as recovered, nothing removed.',
  },
  REQUEST_WITHDRAWN: {
    outcomes: ['close'],
    description:
      'The remediation request was withdrawn (its MachineHealthCheck request deleted) before any removal began: the incident stops, nothing was removed.',
  },
  CLUSTER_PAUSED: {
    outcomes: ['close'],
    description:
      "Cluster API paused the request's Cluster (spec.paused, or the cluster.x-k8s.io/paused annotation, as clusterctl move does), its MachineHealthCheck or its Machine: nothing is reported, an incident not yet removing stops with nothing removed, and the request is reported once unpaused.",
  },
  REMEDIATION_NOT_ALLOWED: {
    outcomes: ['close'],
    description:
      "The request's MachineHealthCheck short-circuits remediation (RemediationAllowed False, e.g. TooManyUnhealthy): nothing is reported, an incident not yet removing stops with nothing removed, and the request is reported once remediation is allowed again.",
  },
  COMPETING_REMEDIATION: {
    outcomes: ['close'],
    description:
      "Another MachineHealthCheck selects the request's Machine without our template (KCP then remediates it on its own, outside our lock, e.g. the one a ClusterClass generates): nothing is reported, an incident not yet removing stops with nothing removed, and the request is reported once that MHC is given our template or removed.",
  },
  STEP_FAILED: {
    outcomes: ['retry', 'block'],
    spendsAttempt: true,
    description: 'A step failed on every delivery of its event: resume after a back-off, or block once the budget is spent.',
  },
  // fleet safety (fleet-gate.ts)
  PAUSED: {
    outcomes: ['retry'],
    spendsAttempt: false,
    description:
      'Remediation is paused, fleet-wide or for this cluster (etcd-remediator pause): probes and plans go on, nothing that changes a cluster runs until resume; the incident deadline bounds the wait.',
  },
  FLEET_STORM: {
    outcomes: ['retry', 'maintenance', 'hygiene'],
    spendsAttempt: false,
    description:
      "More than the storm share of the fleet opened incidents within the storm window: new removals are deferred (leader moves and removals already under way go on), and so are maintenance's defragmentations (a NOSPACE alarm's clearing aside) and leader hygiene's moves, until the count has stayed under the threshold for the cooldown, or a person runs resume --storm.",
  },
  REMOVALS_IN_FLIGHT: {
    outcomes: ['retry'],
    spendsAttempt: false,
    description: 'The fleet already runs maxRemovalsInFlight removals: this one waits for a slot (a holder that died frees its slot when its lease ends).',
  },
  // after a removal: the replacement check and stuck learners (replacement-check.ts, stuck-learner.ts)
  REPLACEMENT_AWAITED: {
    outcomes: ['replacement'],
    description: 'The member is out and its replacement has not joined, started and been promoted yet: the cluster is checked again.',
  },
  REPLACEMENT_JOINED: {
    outcomes: ['replacement'],
    description: 'The cluster is back to the size it had before the removal, every member voting, started and answering: the incident is completed.',
  },
  REPLACEMENT_OVERDUE: {
    outcomes: ['replacement'],
    description:
      'No replacement joined within the policy window (replacement.windowMs) after the removal: said once, with an alarm; the incident stays awaiting-replacement and completes if one joins later.',
  },
  REPLACEMENT_CHECKS_ENDED: {
    outcomes: ['replacement'],
    description: 'No replacement joined within a day of the removal: the incident is no longer checked and stays awaiting-replacement.',
  },
  REPLACEMENT_HELD: {
    outcomes: ['replacement'],
    description:
      "The Cluster's control plane says what holds its scale-up (a paused KubeadmControlPlane, a preflight check in its ScalingUp condition): journaled by watch when it changes, said in the request and an Event; the incident stays awaiting-replacement until a person clears the cause and the replacement joins.",
  },
  REPLACEMENT_RELEASED: {
    outcomes: ['replacement'],
    description: "What held the control plane's scale-up no longer does: journaled by watch; the replacement can come.",
  },
  STUCK_LEARNER_REMOVED: {
    outcomes: ['replacement', 'retry'],
    spendsAttempt: false,
    description:
      'A learner stayed unstarted or unpromoted past stuckLearnerAfterMs (a join that failed): it was removed, which costs no vote; not a remediation of its own. A removal it held up is looked at again at once.',
  },
  LEARNER_PENDING: {
    outcomes: ['retry'],
    spendsAttempt: false,
    description:
      'Only learners hold the removal up (MEMBER_NOT_READY): it waits for them to be promoted, or until stuckLearnerAfterMs since each was first seen, when a learner still not promoted is removed as stuck.',
  },
  // maintenance: defragmentation one member at a time, the leader last (core/maintenance)
  MAINTENANCE_NOSPACE: {
    outcomes: ['maintenance'],
    description:
      'A NOSPACE alarm stands: the history is compacted, every member defragmented one at a time (the leader last, after a move), the alarm disarmed and writes checked.',
  },
  MAINTENANCE_FRAGMENTED: {
    outcomes: ['maintenance'],
    description:
      "A member's database is mostly free pages (maintenance.fragmentedShare and fragmentedMinBytes): it is defragmented, the leader last, after a move.",
  },
  MAINTENANCE_NEAR_QUOTA: {
    outcomes: ['maintenance'],
    description: "A member's database nears its quota (maintenance.nearQuotaShare): it is defragmented before etcd raises NOSPACE.",
  },
  MAINTENANCE_CORRUPT: {
    outcomes: ['maintenance'],
    description:
      "A CORRUPT alarm stands: a member's data diverged, and nothing is defragmented or disarmed until a person has found which (etcd's data corruption guide).",
  },
  MAINTENANCE_STEP_FAILED: {
    outcomes: ['maintenance'],
    description:
      'A step of the maintenance failed (a defragmentation past its deadline, a move refused, a path lost): the run ends, and the next one plans again.',
  },
  MAINTENANCE_STILL_FULL: {
    outcomes: ['maintenance'],
    description:
      'Every member was defragmented and the alarm disarmed, and etcd still refuses writes for space: the live data fills the quota; a person raises --quota-backend-bytes or deletes keys.',
  },
  MAINTENANCE_NOT_NEEDED: { outcomes: ['maintenance'], description: 'No alarm, no fragmented database, none near its quota: nothing to do.' },
  MAINTENANCE_OFF: {
    outcomes: ['maintenance'],
    description:
      'A database needs defragmenting, but maintenance is off for the cluster (maintenance.enabled false, the default, which still clears a NOSPACE alarm unless maintenance.clearNoSpace is false).',
  },
  MAINTENANCE_NO_MARGIN: {
    outcomes: ['maintenance'],
    description:
      'A member being defragmented stalls: with one down, the rest would not hold a quorum (unhealthy members and other disruptions counted down), so none is defragmented.',
  },
  MAINTENANCE_ELECTION: {
    outcomes: ['maintenance'],
    description: 'The members do not agree on a leader now (an election, or a split): no member is defragmented until they do; a run in flight waits.',
  },
  MAINTENANCE_ABANDONED: {
    outcomes: ['maintenance'],
    description: 'A maintenance run took no step for an hour (nobody asked again): it is ended, and the next one plans from the start.',
  },
  MAINTENANCE_RATE_LIMITED: {
    outcomes: ['maintenance'],
    description: 'Every member that needs it was defragmented less than maintenance.memberEveryMs ago: it waits (a NOSPACE alarm is never held so).',
  },
  // leader hygiene, outside any incident (leader-hygiene.ts)
  HYGIENE_DISABLED: {
    outcomes: ['hygiene'],
    description: 'Leader hygiene is off for the cluster (hygiene.enabled false, the default): the leader is not judged.',
  },
  HYGIENE_UNSTABLE: {
    outcomes: ['hygiene'],
    description:
      'The cluster is not settled (no one leader in the last two samples, a moving term, a member without a leader, samples too few or too close): the leader is not judged.',
  },
  HYGIENE_ALARM: { outcomes: ['hygiene'], description: 'A member raises an alarm (NOSPACE, CORRUPT): a person must clear it; leadership is not moved.' },
  HYGIENE_RECENT_ELECTIONS: {
    outcomes: ['hygiene'],
    description: 'Leadership changed within hygiene.recentElectionsMs: the cluster is already paying for elections, so no move adds one.',
  },
  HYGIENE_LEADER_HEALTHY: { outcomes: ['hygiene'], description: 'The leader breaches no degradation rule for the window: nothing to move.' },
  HYGIENE_DEGRADING: {
    outcomes: ['hygiene'],
    description: 'The leader breaches a degradation rule, but for less than the window: it is watched, not moved yet.',
  },
  HYGIENE_RECOVERED: {
    outcomes: ['hygiene'],
    description: 'The leader breached a degradation rule inside the window and is back under its exit level: it is left alone.',
  },
  HYGIENE_SHARED_DEGRADATION: {
    outcomes: ['hygiene'],
    description:
      'Half or more of the members breach the same signal: the cause is shared (storage, host, network), a move would not help, and a person is alerted.',
  },
  HYGIENE_MOVE_LIMIT: {
    outcomes: ['hygiene'],
    description: 'The cluster had hygiene.maxMovesPerDay leader moves in 24 h: no more moves, a person must look at why its leaders degrade.',
  },
  HYGIENE_COOLDOWN: {
    outcomes: ['hygiene'],
    description: 'The last hygiene move was less than hygiene.cooldownMs ago: no second move until the cooldown ends.',
  },
  HYGIENE_NO_TARGET: {
    outcomes: ['hygiene'],
    description:
      'The leader is degraded, but no follower is caught up, free of alarms, known and better on every signal and allowed to lead again (one whose figures are unknown is none): nothing is moved.',
  },
  LEADER_DEGRADED: {
    outcomes: ['hygiene'],
    description: 'The leader stayed degraded for the window on a stable cluster: leadership moves to the best follower (or, in a dry run, is said to).',
  },
  HYGIENE_SCRAPE_FAILED: {
    outcomes: ['hygiene'],
    description:
      "The leader's /metrics or Status (or those of a member never read yet) could not be read, or were refused as no numbers, in this check: the leader is not judged (a follower that cannot be read is only no target; a leader that does not answer at all is remediation's, not hygiene's).",
  },
  HYGIENE_FIGURES_UNKNOWN: {
    outcomes: ['hygiene'],
    description:
      "The leader's figures are unknown (one is NaN or infinite, or its last sample is older than the window): unknown is neither a breach nor health, so the leader is not judged and nothing is moved.",
  },
  HYGIENE_NO_METRICS: { outcomes: ['hygiene'], description: "The cluster's etcd access has no way to read the members' /metrics: the leader is not judged." },
  HYGIENE_PAUSED: { outcomes: ['hygiene'], description: 'The fleet or the cluster is paused: leadership is judged but not moved until a person resumes.' },
  HYGIENE_INCIDENT_OPEN: {
    outcomes: ['hygiene'],
    description: 'An incident is open on the cluster: remediation owns its leadership, so hygiene moves nothing until it ends.',
  },
  HYGIENE_MOVE_PENDING: {
    outcomes: ['hygiene'],
    description: 'A hygiene move asked for is not over yet: it is asked again while fresh, and nothing new is judged.',
  },
  HYGIENE_MOVED: {
    outcomes: ['hygiene'],
    description: 'Leadership moved off the degraded leader to the chosen follower, and a fresh look confirmed the new leader and its term.',
  },
  HYGIENE_WOULD_MOVE: { outcomes: ['hygiene'], description: 'Dry run: the leader would have been moved to the chosen follower; nothing was moved.' },
  HYGIENE_MOVE_FAILED: {
    outcomes: ['hygiene'],
    description:
      "The move was tried and did not take (etcd's answer, or no new leader confirmed): it counts against the cooldown, and the next check judges again.",
  },
  HYGIENE_MOVE_EXPIRED: {
    outcomes: ['hygiene'],
    description: 'The move was delivered later than hygiene.moveExpiryMs after its judgement: the figures are stale, nothing was moved.',
  },
  HYGIENE_SUPERSEDED: {
    outcomes: ['hygiene'],
    description:
      'By the time of the move the leader, the term or the target had changed, or an incident opened: the judgement no longer holds, nothing was moved.',
  },
  // failed
  ACTUATOR_FAILED: { outcomes: ['fail'], description: 'The member is out of etcd, but the actuator could not replace its machine: a person must.' },
} as const satisfies Record<string, ReasonRow>;

export type ReasonCode = keyof typeof reasonTable;

export const reasonCodes = Object.keys(reasonTable) as ReasonCode[];

/** A code's row, typed as a row rather than as its literal. */
export const reasonRow = (code: ReasonCode): ReasonRow => reasonTable[code];

export const isReasonCode = (value: string): value is ReasonCode => Object.hasOwn(reasonTable, value);

/** Retries that only wait (see RetryRow.spendsAttempt): they do not count against the attempt budget. */
export const waitingReasons: readonly ReasonCode[] = reasonCodes.filter((code) => reasonRow(code).spendsAttempt === false);
