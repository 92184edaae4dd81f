// Leader hygiene's events: a round of the periodic check asks for one cluster's check
// (HygieneCheckDue, AWS only: run and watch keep their own timer); a check that finds the leader
// degraded asks move-leader to move it (LeaderDegraded); the move's end is said (HygieneMoveEnded);
// a degradation no move may cure is said once when it starts and once when it ends (LeaderHygieneAlert).
import { z } from 'zod';
import { MAX_MILLIS } from './cluster-view.ts';
import { evidenceSchema, isoTimestampSchema, memberIdSchema, messageSchema, nonEmptyString, reasonCodeSchema } from './common.ts';

const clusterIdSchema = nonEmptyString().describe('The etcd cluster, as named in the cluster directory.');
const termSchema = z.number().int('must be an integer').positive('must be > 0');

export const hygieneCheckDueSchema = z
  .object({
    clusterId: clusterIdSchema,
    at: isoTimestampSchema.describe('When the round that asked for the check ran: a cluster is checked in the rounds its hygiene.checkEveryMs falls in.'),
  })
  .describe("A round of the periodic leader-hygiene check asks for one cluster's check: every member's /metrics and Status are read, and the leader judged.");

export const leaderDegradedSchema = z
  .object({
    clusterId: clusterIdSchema,
    moveId: nonEmptyString(128).describe("The move as the cluster's hygiene record keeps it: only a move recorded as asked is ever made, and only once."),
    at: isoTimestampSchema.describe('When the leader was judged: a move judged longer ago than hygiene.moveExpiryMs is not made.'),
    from: memberIdSchema.describe('The degraded leader.'),
    to: memberIdSchema.describe('The follower ranked best to take over.'),
    term: termSchema.describe('The term the leader led in when judged: a later term means leadership changed since, and nothing is moved.'),
    dryRun: z.boolean().describe('True: say what would be moved, move nothing.'),
    reason: z.literal('LEADER_DEGRADED'),
    message: messageSchema,
    evidence: evidenceSchema.describe('The breaches, the leader and target figures, the ranking and the refusals behind the judgement.'),
  })
  .describe(
    'The periodic check found the leader degraded for the whole window, alone, with a better follower to take over: move-leader moves leadership to it, or in a dry run says it would.',
  );

export const hygieneMoveOutcomes = ['moved', 'failed', 'expired', 'superseded', 'would-move'] as const;

export const hygieneMoveEndedSchema = z
  .object({
    clusterId: clusterIdSchema,
    moveId: nonEmptyString(128),
    at: isoTimestampSchema.describe('When the move ended.'),
    outcome: z.enum(hygieneMoveOutcomes),
    from: memberIdSchema,
    to: memberIdSchema,
    reason: reasonCodeSchema,
    message: messageSchema,
    newLeader: memberIdSchema.optional().describe('Who leads after the move, as verified.'),
    newTerm: termSchema.optional().describe('The term after the move, as verified.'),
    tookMs: z.number().nonnegative('must be ≥ 0').max(MAX_MILLIS, `must be at most ${MAX_MILLIS} ms (a day)`).optional().describe('How long MoveLeader took.'),
  })
  .describe('A leader-hygiene move ended: moved and verified, failed, not made (expired, superseded), or said only (dry run).');

export const hygieneAlertPhases = ['started', 'ended'] as const;

export const leaderHygieneAlertSchema = z
  .object({
    clusterId: clusterIdSchema,
    at: isoTimestampSchema,
    phase: z
      .enum(hygieneAlertPhases)
      .default('started')
      .describe(
        "started: the hold begins (its reason, and for no target the followers refused, tell one hold from the next). ended: the hold said at its start is over (the leader well again, a target found, or another hold); its reason is the hold's.",
      ),
    reason: reasonCodeSchema,
    message: messageSchema,
    evidence: evidenceSchema,
  })
  .describe(
    'The leader is degraded and no move may cure it (a cause the members share, the move limit, no fit target): a person should look. Said once when it starts and once when it ends, not each check.',
  );
