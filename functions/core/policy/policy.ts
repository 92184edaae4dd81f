// Per-cluster policy, with the defaults a user would expect: the one schema the run config,
// register, the construct's defaults and the CLI flags all go through, and the only place a
// default is written. Strict at every level, so a misspelt field is refused rather than dropped
// (its default applying without a word). Durations are milliseconds, each named `<name>Ms`.
import { z } from 'zod';
import { pathNameSchema, PATH_NAMES } from '../common/index.ts';

export { pathNameSchema };
const ms = z.number().int().nonnegative();

/**
 * The least election timeout we accept. The evidence rule waits one election timeout between the
 * samples that prove a leader gone; below this, a typo ("0s", "1" for 1 s) would prove it in
 * milliseconds. etcd's default is 1 s, and sane clusters are rarely below 500 ms.
 */
export const MIN_ELECTION_TIMEOUT_MS = 100;
export const electionTimeoutTooShort = `must be at least ${MIN_ELECTION_TIMEOUT_MS}ms (etcd's default is 1s): evidence samples must be one election timeout apart`;

export const policySchema = z.strictObject({
  /** How long the leader must stay unreachable before we remove it without a move. */
  graceMs: ms.default(60_000),
  allowRemoveWithoutLeaderMove: z.boolean().default(true),
  /**
   * A leader we saw unreachable on every path that answers again, healthy, before the grace window
   * ends: the incident closes as recovered, nothing removed. Off: it is moved off and removed, as
   * a sick leader that answers is (for reporters whose own health check is the authority).
   */
  closeWhenRecovered: z.boolean().default(true),
  // Left out, it is {} filled in by its own fields' defaults.
  backoff: z
    .strictObject({ baseMs: ms.default(5_000), capMs: ms.default(300_000) })
    // A base over the cap would make the first wait longer than every later one is allowed to be.
    .superRefine((b, ctx) => {
      if (b.baseMs > b.capMs)
        ctx.addIssue({
          code: 'custom',
          path: ['baseMs'],
          message: `is ${b.baseMs} ms, over backoff.capMs (${b.capMs} ms): the first wait may not be longer than the longest`,
        });
    })
    .prefault({}),
  maxAttempts: z.number().int().positive().default(10),
  incidentDeadlineMs: ms.default(30 * 60_000),
  /** KCP parity: how many remediations of the same target within minHealthyPeriod before we stop. */
  maxRetry: z.number().int().nonnegative().optional(),
  /** KCP parity: least time between two remediations of the same target. */
  retryPeriodMs: ms.default(0),
  /** KCP parity: a target healthy this long since its last remediation starts a fresh count. */
  minHealthyPeriodMs: ms.default(3_600_000),
  /** Every path by default, in the order PATH_NAMES lists them: the client URL first. */
  pathOrder: z
    .array(pathNameSchema)
    .min(1)
    .default(() => [...PATH_NAMES]),
  /** The cluster's --election-timeout; evidence samples must be at least this far apart. */
  electionTimeoutMs: z.number().int().min(MIN_ELECTION_TIMEOUT_MS, electionTimeoutTooShort).default(1_000),
  /** Deadline of every single etcd call: at 0 every call would time out before it is sent. */
  callTimeoutMs: z.number().int().positive().default(2_000),
  /** How many immediate re-probes a changing leader may cost before we back off. */
  maxImmediateReprobes: z.number().int().nonnegative().default(3),
  dryRun: z.boolean().default(false),
  /** A snapshot of the keyspace, through a healthy member, before every MemberRemove. */
  snapshotBeforeRemove: z.boolean().default(true),
  /**
   * A snapshot that cannot be taken blocks the removal (SNAPSHOT_FAILED). Off: the failure is
   * journaled and the member is removed without one, for a cluster whose data lives elsewhere.
   */
  snapshotRequired: z.boolean().default(true),
  /** A snapshot streams the whole keyspace; a call deadline sized for status calls is too short. */
  snapshotTimeoutMs: z.number().int().positive().default(120_000),
  /** How long the actuator may take to accept a machine replacement before the step fails. */
  actuatorTimeoutMs: z.number().int().positive().default(300_000),
  /** The cluster lock's lease: renewed while remediation runs, lapsing this long after a holder died. */
  lockLeaseMs: z.number().int().positive().default(30_000),
  /** Where in the cluster's own etcd the lock and the removal record live, seen by every remediator. */
  guardPrefix: z
    .string()
    .regex(/^\/[^\s]*[^/\s]$/, 'must be a key prefix such as /etcd-remediator (starts with /, no trailing /, no spaces)')
    .default('/etcd-remediator'),
  /**
   * Remove a member while the cluster is still below the size it had before the last removal
   * (its replacement has not joined yet). Off: one member down at a time.
   */
  allowShrink: z.boolean().default(false),
  /**
   * This state is the only remediator of the cluster: the lock and the removal record are kept in
   * the state store, not in etcd, and every message says so. Off: both live in the cluster's own
   * etcd, and no member is removed while etcd cannot hold them.
   */
  singleRemediator: z.boolean().default(false),
  /**
   * Fleet safety (fleet-gate.ts): the storm guard defers new removals while more than stormShare
   * of the registered clusters, and at least stormMinClusters, opened incidents within
   * stormWindowMs, until the count has stayed at or under that for stormCooldownMs; and at most
   * maxRemovalsInFlight removals run across the fleet at once.
   */
  fleet: z
    .strictObject({
      stormShare: z.number().min(0).max(1).default(0.2),
      stormMinClusters: z.number().int().positive().default(2),
      stormWindowMs: z.number().int().positive().default(600_000),
      stormCooldownMs: ms.default(600_000),
      maxRemovalsInFlight: z.number().int().positive().default(3),
    })
    .prefault({}),
  /**
   * After a removal the incident awaits its replacement, checked every checkEveryMs until the
   * cluster is back to its size with every member voting, started and answering (replacement-check.ts);
   * one that has not come windowMs after the removal is said overdue (REPLACEMENT_OVERDUE).
   */
  replacement: z
    .strictObject({
      windowMs: z.number().int().positive().default(1_800_000),
      checkEveryMs: z.number().int().positive().default(15_000),
    })
    .prefault({}),
  /** A learner unstarted or unpromoted this long is removed (stuck-learner.ts); 0: never. */
  stuckLearnerAfterMs: ms.default(900_000),
  /**
   * How often each cluster's learners are looked at outside any incident (app/learners/learner-check.ts), so
   * one a join left half-way is removed past stuckLearnerAfterMs with no incident open; 0: never.
   */
  learnerCheckEveryMs: ms.default(300_000),
  /**
   * Maintenance (core/maintenance): defragment one member at a time, the leader last after a move.
   * Off by default, except to clear a NOSPACE alarm, which blocks every remediation. The thresholds
   * read against the tools others run: etcd-defrag (by an etcd maintainer) defragments at 80 % of
   * the quota or 200 MiB free; Deckhouse pages at 95 % of the quota, too late to start one member at
   * a time; the etcd operators' defrag specs pair a free size with a ratio (128M and 0.7). We take
   * etcd-defrag's 80 %, and its 200 MiB free only when that is also half the file, so a large
   * database with little churn is not rewritten for a small share of it.
   */
  maintenance: z
    .strictObject({
      /** Fragmentation and the quota trigger it too, not only NOSPACE. */
      enabled: z.boolean().default(false),
      /** Clear a NOSPACE alarm even with maintenance off (it blocks every remediation). */
      clearNoSpace: z.boolean().default(true),
      /** Free pages (dbSize - dbSizeInUse) at least this share of the file... */
      fragmentedShare: z.number().gt(0).max(1).default(0.5),
      /** ...and at least this many bytes. */
      fragmentedMinBytes: z
        .number()
        .int()
        .nonnegative()
        .default(200 * 1024 * 1024),
      /** dbSize at least this share of the quota. */
      nearQuotaShare: z.number().gt(0).max(1).default(0.8),
      /** A member is defragmented at most once in this long (never held so for NOSPACE). */
      memberEveryMs: ms.default(6 * 3_600_000),
      /** With enabled, how often `run` and `watch` look at each cluster for maintenance; 0: never. */
      checkEveryMs: ms.default(300_000),
      /** How long one member's defragmentation may take before the step gives up on it. */
      defragmentDeadlineMs: z
        .number()
        .int()
        .min(1_000, 'must be at least 1000 ms')
        .max(720_000, 'must be at most 720000 ms: a step runs within one Lambda invocation, 15 min at most')
        .default(600_000),
    })
    .prefault({}),
  /**
   * Leader hygiene (leader-hygiene.ts): move leadership off a leader that stays degraded for
   * windowMs while the cluster is stable, to a follower better on every signal. Off by default; with
   * dryRun (or the policy's own) it only says what it would move.
   */
  hygiene: z
    .strictObject({
      enabled: z.boolean().default(false),
      dryRun: z.boolean().default(false),
      /** How long the leader must stay degraded (the etcd mixin's `for: 10m`), and stay clear to be clear again. */
      windowMs: z.number().int().positive().default(600_000),
      /** Least time between two moves of one cluster: a transfer drops proposals for up to an election timeout. */
      cooldownMs: ms.default(1_800_000),
      /** How long the member a move (or an election) took leadership from may not be a target. */
      returnBlockMs: ms.default(7_200_000),
      /** Moves per cluster per 24 h; past them a person is asked to look. */
      maxMovesPerDay: z.number().int().positive().default(3),
      /** No move while leadership changed this recently: the cluster is already paying for elections. */
      recentElectionsMs: ms.default(900_000),
      /** Entries a target's applied index may trail the leader's committed index. */
      maxApplyLag: z.number().int().nonnegative().default(1_000),
      /** How often the periodic check scrapes every member and judges the leader (a sample a check). */
      checkEveryMs: z.number().int().min(1_000, 'must be at least 1000 ms').default(60_000),
      /** A move delivered later than this after its judgement is not made: its figures are stale. */
      moveExpiryMs: z.number().int().min(1_000, 'must be at least 1000 ms').default(120_000),
      thresholds: z
        .strictObject({
          /** The mixin's warning levels; a breach clears below half of them. */
          fsyncP99Ms: z.number().int().positive().default(500),
          commitP99Ms: z.number().int().positive().default(250),
          /** Heartbeat send failures rising in this many of the last heartbeatSamples samples. */
          heartbeatFailureSamples: z.number().int().positive().default(3),
          heartbeatSamples: z.number().int().positive().default(10),
          /** The leader's p99 this many times the best follower's (16: four buckets), above the floors below. */
          outlierFactor: z.number().min(1).default(16),
          outlierFsyncP99Ms: z.number().int().positive().default(100),
          outlierCommitP99Ms: z.number().int().positive().default(125),
          /** The means must agree: the leader's at least this many times the best follower's. */
          outlierMeanFactor: z.number().min(1).default(4),
          /**
           * The docs' healthy levels (WAL fsync p99 under 10 ms, backend commit under 25 ms): a target
           * under them is never "worse" than the leader on that latency, so bucket noise refuses nobody.
           */
          healthyFsyncP99Ms: z.number().int().positive().default(10),
          healthyCommitP99Ms: z.number().int().positive().default(25),
          /**
           * A member whose scrapes took longer than this on average over the window is stalled (CPU
           * starvation shows here on every member, where heartbeat failures show on the leader
           * alone): half or more stalled is a shared cause, and a stalled follower is no target.
           */
          stallAnswerMs: z.number().int().positive().default(250),
          /** (d) the followers' round trip to the leader above this (the mixin's etcdMemberCommunicationSlow, 150 ms)... */
          peerRoundTripMs: z.number().int().positive().default(150),
          /** ...and this many times their round trip to each other: a slow network they all share is no reason to move. */
          peerOutlierFactor: z.number().min(1).default(4),
          /** A target's round trip under this is never "worse" than the leader's (loopback and LAN noise). */
          healthyPeerRoundTripMs: z.number().int().positive().default(10),
        })
        .refine((t) => t.heartbeatFailureSamples <= t.heartbeatSamples, {
          path: ['heartbeatFailureSamples'],
          message: 'must be at most heartbeatSamples',
        })
        .prefault({}),
    })
    .prefault({}),
});

export type Policy = z.infer<typeof policySchema>;
export type PolicyInput = z.input<typeof policySchema>;

export const defaultPolicy: Policy = policySchema.parse({});

export const parsePolicy = (input: PolicyInput = {}): Policy => policySchema.parse(input);

/** What is wrong with a policy input, for an edge to say where it came from. */
export interface PolicyProblem {
  /** Dotted, as the policy names it: `backoff.baseMs`. */
  field: string;
  problem: string;
}

/** The words every edge says a typo in (the cold start, synth, the directory, the CLI's zod-issues.ts). */
export const UNKNOWN_FIELD = 'is not a known field';

/** The first problem of a policy input, an unknown key named as a field of its own; undefined when it is a policy. */
export function firstPolicyProblem(input: unknown): PolicyProblem | undefined {
  const parsed = policySchema.safeParse(input);
  const issue = parsed.error?.issues[0];
  if (!issue) return undefined;
  const unknown = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const path = unknown === undefined ? issue.path : [...issue.path, unknown];
  return { field: path.map(String).join('.'), problem: unknown === undefined ? issue.message : UNKNOWN_FIELD };
}

// A single-remediator cluster (policy singleRemediator) keeps its lock and removal record in one
// state store: safe only while nothing else remediates it. Every message of its incidents says
// so, so that nobody reads one of them and starts a second remediator beside it.
export const singleRemediatorNote = (clusterId: string): string =>
  `(cluster ${clusterId} is a single-remediator cluster by policy: its lock and removal record are kept in this state store only, and a remediator with another state sees neither)`;

/** The message with the note once at its end. */
export function withSingleRemediatorNote(message: string, clusterId: string): string {
  const note = singleRemediatorNote(clusterId);
  return message.endsWith(note) ? message : `${message} ${note}`;
}
