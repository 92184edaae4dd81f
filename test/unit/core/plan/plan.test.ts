import { describe, it, expect } from 'vitest';
import { plan, approveLeaderGone, type PlanInput } from '../../../../functions/core/plan/plan.ts';
import type { Decision, ReasonCode } from '../../../../functions/core/common/decision.ts';
import { reasonRow } from '../../../../functions/core/common/reason-table.ts';
import type { PolicyInput } from '../../../../functions/core/policy/policy.ts';
import { buildClusterView, type ClusterView } from '../../../../functions/core/view/view.ts';
import { cluster, endpointOf, failureOf, fixedRandom, id, policy, view } from '../fixtures.ts';

const ET = 1_000;
const MIN = 60_000;
const T0 = 10 * MIN;
const down = { paths: 'refused' as const };
const slow = { paths: 'timeout' as const };
const atQuota = { alarms: ['NOSPACE'] };
/** The seed case (the leader unreachable, named by the followers) with one follower only timing out: one healthy member of three after the removal. */
const slowPeer = (at: number): ClusterView => cluster(at, 3, { leader: 0, override: { 0: down, 2: slow } });
const deadLeader = (at: number): ClusterView => cluster(at, 3, { leader: 0, override: { 0: down } });

interface Setup {
  samples: ClusterView[];
  target?: string;
  policy?: PolicyInput;
  incident?: Partial<PlanInput['incident']>;
  remediation?: PlanInput['remediation'];
  now?: number;
  random?: number;
  targetGone?: string;
  maintenance?: PlanInput['maintenance'];
}

function input(s: Setup): PlanInput {
  const now = s.now ?? s.samples.at(-1)?.at ?? T0;
  const i: PlanInput = {
    samples: s.samples,
    targetId: s.target ?? id(0),
    incident: { openedAt: now - MIN, attempt: 0, immediateReprobes: 0, ...s.incident },
    remediation: s.remediation ?? { retryCount: 0 },
    policy: policy({ electionTimeoutMs: ET, ...s.policy }),
    now,
    random: fixedRandom(s.random ?? 0.5),
  };
  if (s.targetGone !== undefined) i.targetGone = s.targetGone;
  if (s.maintenance) i.maintenance = s.maintenance;
  return i;
}

interface Row extends Setup {
  name: string;
  kind: Decision['kind'];
  reason: ReasonCode;
  decidedBy: string;
  says?: RegExp;
  /** For retries: when. */
  at?: number;
  reprobeNow?: boolean;
  leaderMove?: string;
}

const healthy = cluster(T0, 3, { leader: 0 });
/** The members `which` hold 1 MiB of free pages in a 2 MiB file: history a defragmentation reclaims. */
const withFree = (v: ClusterView, which: number[]): ClusterView => ({
  ...v,
  members: v.members.map((m, i) => (which.includes(i) && m.status ? { ...m, status: { ...m.status, dbSize: 2 * 1024 * 1024, dbSizeInUse: 1024 * 1024 } } : m)),
});
/** A view whose members `which` run where a disruption is under way (their Node cordoned, or their Machine deleting). */
const HOSTS = {
  cordoned: { cordoned: true },
  deleting: { machine: { name: 'wl', deleting: true } },
  outdated: { machine: { name: 'wl', deleting: false, outdated: true } },
};
const disrupted = (v: ClusterView, which: Record<number, keyof typeof HOSTS>): ClusterView => ({
  ...v,
  members: v.members.map((m, i) => {
    const how = which[i];
    if (how === undefined) return m;
    const host = HOSTS[how];
    return { ...m, host: { node: `node-${i}`, nodeExists: true, ...host, ...('machine' in host ? { machine: { ...host.machine, name: `wl-${i}` } } : {}) } };
  }),
});
const follower = cluster(T0, 3, { leader: 1 });

const rows: Row[] = [
  // Preconditions, in order.
  {
    name: 'the incident is past its deadline',
    samples: [healthy],
    incident: { openedAt: T0 - 30 * MIN, attempt: 99 },
    kind: 'block',
    reason: 'INCIDENT_DEADLINE_EXCEEDED',
    decidedBy: 'incident-deadline',
    says: /incident for etcd-0 .* open 30 min .* deadline of 30 min/,
  },
  {
    name: 'the attempt budget is spent',
    samples: [healthy],
    incident: { attempt: 10 },
    kind: 'block',
    reason: 'ATTEMPTS_EXHAUSTED',
    decidedBy: 'attempt-budget',
    says: /etcd-0 .* all 10 attempts/,
  },
  {
    name: 'maxRetry reached within the healthy period',
    samples: [follower],
    policy: { maxRetry: 2 },
    remediation: { retryCount: 3, lastRemediatedAt: T0 - 10 * MIN },
    kind: 'block',
    reason: 'MAX_RETRY_EXCEEDED',
    decidedBy: 'kcp-max-retry',
    says: /remediated 3 times, the last 10 min ago.*maxRetry is 2/,
  },
  {
    // As KCP: maxRetry 2 allows two retries after the first remediation.
    name: 'the last retry maxRetry allows',
    samples: [follower],
    policy: { maxRetry: 2 },
    remediation: { retryCount: 2, lastRemediatedAt: T0 - 10 * MIN },
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    decidedBy: 'leadership',
  },
  {
    name: 'maxRetry 0 allows no retry',
    samples: [follower],
    policy: { maxRetry: 0 },
    remediation: { retryCount: 1, lastRemediatedAt: T0 - 10 * MIN },
    kind: 'block',
    reason: 'MAX_RETRY_EXCEEDED',
    decidedBy: 'kcp-max-retry',
    says: /remediated 1 time, .*maxRetry is 0/,
  },
  {
    name: 'maxRetry reached long ago starts a fresh count',
    samples: [follower],
    policy: { maxRetry: 2 },
    remediation: { retryCount: 2, lastRemediatedAt: T0 - 61 * MIN },
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    decidedBy: 'leadership',
  },
  {
    name: 'the retry period has not elapsed',
    samples: [follower],
    policy: { retryPeriodMs: 5 * MIN },
    remediation: { retryCount: 1, lastRemediatedAt: T0 - MIN },
    kind: 'retry',
    reason: 'REMEDIATION_RETRY_PERIOD',
    decidedBy: 'kcp-retry-period',
    at: T0 + 4 * MIN,
    reprobeNow: false,
  },
  {
    name: 'no member answers',
    samples: [cluster(T0, 3, { override: { 0: down, 1: down, 2: { paths: 'timeout' } } })],
    kind: 'retry',
    reason: 'CLUSTER_UNREACHABLE',
    decidedBy: 'cluster-reachable',
    at: T0 + 2_500,
    reprobeNow: false,
  },
  {
    name: 'no probe yet',
    samples: [],
    now: T0,
    kind: 'retry',
    reason: 'CLUSTER_UNREACHABLE',
    decidedBy: 'cluster-reachable',
  },
  {
    name: 'every member fails TLS',
    samples: [cluster(T0, 2, { override: { 0: { paths: 'tls' }, 1: { paths: 'tls' } } })],
    kind: 'block',
    reason: 'TLS_FAILED',
    decidedBy: 'cluster-reachable',
    says: /fix the client certificate or CA used for http:\/\/127\.0\.0\.1:4001 and http:\/\/127\.0\.0\.1:4011\.$/,
  },
  {
    // No member list at all: the seeds' failures are the only evidence, and they name the credential.
    name: 'every seed fails TLS before any member list',
    samples: [
      buildClusterView({
        at: T0,
        members: [],
        seeds: [],
        listFailures: [0, 1].map((i) => ({
          path: 'direct',
          endpoint: endpointOf(i),
          reachability: 'tls',
          latencyMs: 3,
          failure: failureOf('tls', endpointOf(i)),
        })),
      }),
    ],
    kind: 'block',
    reason: 'TLS_FAILED',
    decidedBy: 'cluster-reachable',
    says: /fix the client certificate or CA used for http:\/\/127\.0\.0\.1:4001 and http:\/\/127\.0\.0\.1:4011\.$/,
  },
  {
    name: 'every seed refuses before any member list',
    samples: [
      buildClusterView({
        at: T0,
        members: [],
        seeds: [],
        listFailures: [{ path: 'direct', endpoint: endpointOf(0), reachability: 'refused', latencyMs: 1, failure: failureOf('refused', endpointOf(0)) }],
      }),
    ],
    kind: 'retry',
    reason: 'CLUSTER_UNREACHABLE',
    decidedBy: 'cluster-reachable',
    says: /No member of the cluster answered \(direct http:\/\/127\.0\.0\.1:4001 refused/,
  },
  {
    name: 'every member rejects our user',
    samples: [cluster(T0, 2, { override: { 0: { paths: 'auth' }, 1: { paths: 'auth' } } })],
    kind: 'block',
    reason: 'AUTH_FAILED',
    decidedBy: 'cluster-reachable',
    says: /fix the etcd user/,
  },
  {
    name: 'the target is not a member',
    samples: [healthy],
    target: 'deadbeef',
    kind: 'block',
    reason: 'TARGET_NOT_FOUND',
    decidedBy: 'target-found',
    says: /deadbeef/,
  },
  {
    name: 'removal would break quorum',
    samples: [cluster(T0, 3, { leader: 1, override: { 2: down } })],
    kind: 'block',
    reason: 'QUORUM_AT_RISK',
    decidedBy: 'quorum-gate',
    says: /etcd-0 .*etcd-2 .* unreachable on every path/,
  },
  {
    name: 'removal would break quorum, the member short of it only timing out: looked at again with a longer probe',
    samples: [slowPeer(T0)],
    kind: 'retry',
    reason: 'QUORUM_AT_RISK',
    decidedBy: 'quorum-gate',
    says: /etcd-2 .*answered on no path within .*so nothing is removed: the next probe waits 4 s \(look 1 of 2 before this blocks\); we look again at /,
  },
  {
    name: 'the member short of quorum timed out on the second look too',
    samples: [slowPeer(T0 - 5_000), slowPeer(T0)],
    kind: 'retry',
    reason: 'QUORUM_AT_RISK',
    decidedBy: 'quorum-gate',
    says: /the next probe waits 8 s \(look 2 of 2 /,
  },
  {
    name: 'the member short of quorum timed out through three probes in a row: blocked',
    samples: [slowPeer(T0 - 10_000), slowPeer(T0 - 5_000), slowPeer(T0)],
    kind: 'block',
    reason: 'QUORUM_AT_RISK',
    decidedBy: 'quorum-gate',
    says: /below the quorum of 2.*: etcd-2 .*answered on no path through 3 probes in a row, the last waiting /,
  },
  {
    name: 'of two members short of quorum one refused: blocked at once, a timeout beside it is no doubt',
    samples: [cluster(T0, 5, { leader: 0, override: { 0: down, 3: down, 4: slow } })],
    kind: 'block',
    reason: 'QUORUM_AT_RISK',
    decidedBy: 'quorum-gate',
  },
  {
    name: 'no quorum now',
    samples: [cluster(T0, 3, { leader: 0, override: { 1: down, 2: down } })],
    kind: 'block',
    reason: 'NO_QUORUM',
    decidedBy: 'quorum-gate',
  },
  {
    name: 'the last member',
    samples: [cluster(T0, 1)],
    kind: 'block',
    reason: 'LAST_MEMBER',
    decidedBy: 'quorum-gate',
  },
  // Leadership.
  {
    name: 'a learner',
    samples: [
      view(T0, [
        { i: 0, leader: 1 },
        { i: 1, leader: 1 },
        { i: 2, leader: 1 },
        { i: 3, learner: true, leader: 1 },
      ]),
    ],
    target: id(3),
    kind: 'approve',
    reason: 'TARGET_IS_LEARNER',
    leaderMove: 'not-needed',
    decidedBy: 'leadership',
    says: /etcd-3 .* is a learner/,
  },
  {
    name: 'a follower',
    samples: [follower],
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    leaderMove: 'not-needed',
    decidedBy: 'leadership',
    says: /^etcd-0 \(8e9e05c52164694d\) is a follower \(the members agree the leader is etcd-1 \(91bc3c398fb3c146\) at term 2\) and answers on direct http:\/\/127\.0\.0\.1:4001; removal is approved without a leader move\.$/,
  },
  {
    name: 'a former leader',
    samples: [healthy, cluster(T0 + 500, 3, { leader: 2, term: 3 })],
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    leaderMove: 'not-needed',
    decidedBy: 'leadership',
    says: /^Leadership moved from etcd-0 .* to etcd-2 .* at term 3, so it is a follower now; it answers on direct http:\/\/127\.0\.0\.1:4001; removal is approved/,
  },
  {
    name: 'an unreachable follower',
    samples: [cluster(T0, 3, { leader: 1, override: { 0: down } })],
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    leaderMove: 'not-needed',
    decidedBy: 'leadership',
  },
  {
    name: 'the reachable leader',
    samples: [healthy],
    kind: 'move-leader',
    reason: 'LEADER_MOVE_REQUIRED',
    decidedBy: 'leadership',
    says: /move leadership to etcd-1 .* \(then etcd-2 .*\) over direct before removing it\.$/,
  },
  {
    name: 'a leader seen down on every path that answers again, healthy, inside the grace window',
    samples: [deadLeader(T0 - 2 * ET), deadLeader(T0 - ET), healthy],
    kind: 'close',
    reason: 'TARGET_RECOVERED',
    decidedBy: 'leadership',
    says: /^etcd-0 .* is the leader at term 2 and answers on direct http:\/\/127\.0\.0\.1:4001, healthy, after it was unreachable on every path from .* to .*; it recovered before the grace window of 60 s ran out, so the incident closes with nothing removed; report it again if it is still sick\.$/,
  },
  {
    name: 'the same with closeWhenRecovered off: it is a sick leader that answers',
    samples: [deadLeader(T0 - 2 * ET), deadLeader(T0 - ET), healthy],
    policy: { closeWhenRecovered: false },
    kind: 'move-leader',
    reason: 'LEADER_MOVE_REQUIRED',
    decidedBy: 'leadership',
  },
  {
    name: 'a leader seen down that answers on one path only has not recovered',
    samples: [
      cluster(T0 - ET, 3, { leader: 0, override: { 0: { paths: { direct: 'refused', 'exec-relay': 'refused' } } } }),
      cluster(T0, 3, { leader: 0, override: { 0: { paths: { direct: 'refused', 'exec-relay': 'ok' } } } }),
    ],
    kind: 'move-leader',
    reason: 'LEADER_MOVE_REQUIRED',
    decidedBy: 'leadership',
  },
  {
    name: 'a leader seen down that answers with an alarm has not recovered',
    samples: [deadLeader(T0 - ET), cluster(T0, 3, { leader: 0, override: { 0: { alarms: ['CORRUPT'] } } })],
    kind: 'move-leader',
    reason: 'LEADER_MOVE_REQUIRED',
    decidedBy: 'leadership',
  },
  {
    // etcd refuses every write under NOSPACE, the lock's among them: said before any move, and
    // maintenance asked to clear it (maintenance.clearNoSpace, on by default); no attempt spent.
    name: 'a leader whose NOSPACE alarm stands',
    samples: [withFree(cluster(T0, 3, { leader: 0, override: { 0: { alarms: ['NOSPACE'] } } }), [0, 1, 2])],
    kind: 'retry',
    reason: 'NOSPACE_CLEARING',
    decidedBy: 'etcd-writable',
    says: /is not removed yet: a NOSPACE alarm \(raised by etcd-0\) stands.*maintenance clears it: .*disarm the alarm/,
  },
  {
    name: 'a leader whose NOSPACE alarm stands, clearing it turned off',
    samples: [cluster(T0, 3, { leader: 0, override: { 0: { alarms: ['NOSPACE'] } } })],
    policy: { maintenance: { clearNoSpace: false } },
    kind: 'block',
    reason: 'ETCD_NO_SPACE',
    decidedBy: 'etcd-writable',
    says: /maintenance\.clearNoSpace false.*; otherwise free space \(etcdctl compact/,
  },
  {
    name: 'a NOSPACE alarm the maintenance ended without clearing since the incident opened',
    samples: [cluster(T0, 3, { leader: 0, override: { 0: { alarms: ['NOSPACE'] } } })],
    maintenance: {
      lastRun: {
        reason: 'MAINTENANCE_NOSPACE',
        outcome: 'failed',
        endReason: 'MAINTENANCE_STILL_FULL',
        message: 'The live data fills the quota.',
        endedAt: T0 - 1_000,
      },
    },
    kind: 'block',
    reason: 'ETCD_NO_SPACE',
    decidedBy: 'etcd-writable',
    says: /blocked: the maintenance that clears it ended failed \(MAINTENANCE_STILL_FULL\): The live data fills the quota; otherwise/,
  },
  {
    name: 'a NOSPACE alarm raised again after the maintenance cleared it in this incident',
    samples: [withFree(cluster(T0, 3, { leader: 0, override: { 0: { alarms: ['NOSPACE'] } } }), [0, 1, 2])],
    maintenance: {
      lastRun: {
        reason: 'MAINTENANCE_NOSPACE',
        outcome: 'done',
        endReason: 'MAINTENANCE_NOT_NEEDED',
        message: 'No alarm: nothing to do.',
        endedAt: T0 - 1_000,
      },
    },
    kind: 'block',
    reason: 'ETCD_NO_SPACE',
    decidedBy: 'etcd-writable',
    says: /blocked: the maintenance cleared it .* and it was raised again: the live data fills the quota/,
  },
  {
    // 3 members, one dead, NOSPACE on the two others, history to reclaim: defragmenting either
    // survivor would stall the quorum, so nothing can clear it: blocked, saying what a person can do.
    name: 'NOSPACE on 3 members with one dead: no margin to defragment',
    samples: [withFree(cluster(T0, 3, { leader: 1, override: { 0: down, 1: atQuota, 2: atQuota } }), [1, 2])],
    kind: 'block',
    reason: 'ETCD_NO_SPACE',
    decidedBy: 'etcd-writable',
    says: /blocked: .*with one member stalled by its defragmentation, 1 of 3 voting members would answer.*raise --quota-backend-bytes on every member and disarm the alarm; otherwise/,
  },
  {
    // Another disruption: removing the target of 3 leaves 2 of 2, no margin, while etcd-2's Node is cordoned.
    name: "a follower's removal while another member's Node is cordoned (a drain under way)",
    samples: [disrupted(cluster(T0, 3, { leader: 1 }), { 2: 'cordoned' })],
    kind: 'retry',
    reason: 'DISRUPTION_IN_PROGRESS',
    decidedBy: 'no-other-disruption',
    says: /^Removing etcd-0 .* would leave 2 of 2 voting members healthy, the quorum of 2 with no margin, while another disruption may take one of them down \(etcd-2 .*: its Node node-2 is cordoned \(a drain stops its pods\)\); nothing is removed until it ends/,
  },
  {
    name: "a follower's removal while another member's Machine is deleting (a rollout, another remediation)",
    samples: [disrupted(cluster(T0, 3, { leader: 1 }), { 2: 'deleting' })],
    kind: 'retry',
    reason: 'DISRUPTION_IN_PROGRESS',
    decidedBy: 'no-other-disruption',
    says: /its Machine wl-2 is being deleted/,
  },
  {
    // KubeadmControlPlane's rollout replaces a Machine whose UpToDate condition is False: that member goes down next.
    name: "a follower's removal while another member's Machine is not up to date (a rollout will replace it)",
    samples: [disrupted(cluster(T0, 3, { leader: 1 }), { 2: 'outdated' })],
    kind: 'retry',
    reason: 'DISRUPTION_IN_PROGRESS',
    decidedBy: 'no-other-disruption',
    says: /\(etcd-2 .*: its Machine wl-2 is not up to date \(the control plane's rollout replaces it next\)\)/,
  },
  {
    // The outdated member is the one the rollout's new Machine replaces: counted once, as that member, not once more.
    name: 'an outdated member and the Machine being created to replace it count as one disruption',
    samples: [{ ...disrupted(cluster(T0, 5, { leader: 1 }), { 2: 'outdated' }), machines: [{ name: 'cp-new', deleting: false }] }],
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    decidedBy: 'leadership',
  },
  {
    // A control-plane Machine being created (a KCP rollout's scale-up): an outdated member goes next, which one unknown.
    name: "a follower's removal while a control-plane Machine is being created (a rollout)",
    samples: [
      {
        ...cluster(T0, 3, { leader: 1 }),
        machines: [
          { name: 'cp-new', deleting: false },
          { name: 'cp-1', nodeName: 'node-1', deleting: false },
        ],
      },
    ],
    kind: 'retry',
    reason: 'DISRUPTION_IN_PROGRESS',
    decidedBy: 'no-other-disruption',
    says: /while another disruption may take one of them down \(Machine cp-new is being created \(a rollout or a scale-up/,
  },
  {
    // A maintenance run's defragmentation claimed now (the lock may have lapsed under it): the member still answers, and stalls any moment.
    name: "a follower's removal while a maintenance run defragments another member",
    samples: [cluster(T0, 3, { leader: 1 })],
    maintenance: { inFlight: { member: id(2), runId: 'maintenance-run-1', until: T0 + 60_000 } },
    kind: 'retry',
    reason: 'DISRUPTION_IN_PROGRESS',
    decidedBy: 'no-other-disruption',
    says: /would leave 2 of 2 voting members healthy.*\(etcd-2 .*: maintenance run maintenance-run-1 is defragmenting it \(its step claimed until /,
  },
  {
    name: 'a defragmentation claim that lapsed (its executor crashed) holds nothing',
    samples: [cluster(T0, 3, { leader: 1 })],
    maintenance: { inFlight: { member: id(2), runId: 'maintenance-run-1', until: T0 - 1 } },
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    decidedBy: 'leadership',
  },
  {
    name: 'a removal with a margin to spare goes on through a rollout',
    samples: [{ ...cluster(T0, 5, { leader: 1 }), machines: [{ name: 'cp-new', deleting: false }] }],
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    decidedBy: 'leadership',
  },
  {
    // 5 members: 4 left, a quorum of 3, and 3 still up with the cordoned one down: a margin remains.
    name: 'a removal with a margin to spare goes on through another disruption',
    samples: [disrupted(cluster(T0, 5, { leader: 1 }), { 2: 'cordoned' })],
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    decidedBy: 'leadership',
  },
  {
    // The target's own Node cordoned is Cluster API draining the Machine it remediates: no reason to wait.
    name: "the target's own Node cordoned holds nothing",
    samples: [disrupted(cluster(T0, 3, { leader: 1 }), { 0: 'cordoned' })],
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    decidedBy: 'leadership',
  },
  {
    // The quota reached: every member raises NOSPACE, and one follower is dead. An alarm is no
    // member lost: the wait is the alarm's, clearing it, never NO_QUORUM and disaster recovery.
    name: '5 members at their quota (NOSPACE on every one), the target a dead follower',
    samples: [withFree(cluster(T0, 5, { leader: 1, override: { 0: down, 1: atQuota, 2: atQuota, 3: atQuota, 4: atQuota } }), [1, 2, 3, 4])],
    kind: 'retry',
    reason: 'NOSPACE_CLEARING',
    decidedBy: 'etcd-writable',
    says: /^(?!.*(disaster|snapshot|quorum)).*NOSPACE alarm \(raised by etcd-1, etcd-2, etcd-3, etcd-4\)/,
  },
  {
    // The look ran while our own maintenance defragmented etcd-2 (a stalled member answers late): it
    // is down to the look for that alone, and the run clearing the alarm goes on; no block.
    name: '5 members at their quota, the target dead, another stalled by our own defragmentation as the look ran',
    samples: [withFree(cluster(T0, 5, { leader: 1, override: { 0: down, 1: atQuota, 2: down, 3: atQuota, 4: atQuota } }), [1, 3, 4])],
    maintenance: { spans: [{ member: id(2), from: T0 - 100, until: T0 + 500 }] },
    kind: 'retry',
    reason: 'NOSPACE_CLEARING',
    decidedBy: 'etcd-writable',
  },
  {
    // The same member down with no defragmentation of ours under way then: two of five down leave no margin.
    name: '5 members at their quota, the target dead, another down when no defragmentation of ours ran',
    samples: [withFree(cluster(T0, 5, { leader: 1, override: { 0: down, 1: atQuota, 2: down, 3: atQuota, 4: atQuota } }), [1, 3, 4])],
    maintenance: { spans: [{ member: id(2), from: T0 - 60_000, until: T0 - 30_000 }] },
    kind: 'block',
    reason: 'ETCD_NO_SPACE',
    decidedBy: 'etcd-writable',
    says: /below the quorum of 3/,
  },
  {
    // The same, with another member's Node cordoned: a defragmentation now would leave no margin,
    // and the drain ends: the removal waits for it, naming the Node, neither clearing nor blocking.
    name: '5 members at their quota, the target a dead follower, another Node cordoned',
    samples: [
      disrupted(withFree(cluster(T0, 5, { leader: 1, override: { 0: down, 1: atQuota, 2: atQuota, 3: atQuota, 4: atQuota } }), [1, 2, 3, 4]), {
        3: 'cordoned',
      }),
    ],
    kind: 'retry',
    reason: 'DISRUPTION_IN_PROGRESS',
    decidedBy: 'etcd-writable',
    says: /NOSPACE alarm .* stands.*maintenance clears it once another disruption ends: .*etcd-3 .*: its Node node-3 is cordoned/,
  },
  {
    name: 'the reachable leader with nobody free to take over',
    samples: [healthy],
    incident: { excludeCandidates: [id(1), id(2)] },
    kind: 'block',
    reason: 'NO_MOVE_CANDIDATE',
    decidedBy: 'leadership',
    says: /excluded as being remediated: etcd-1 .* and etcd-2/,
  },
  {
    name: 'the unreachable leader inside the grace window: backoff first',
    samples: [deadLeader(T0 - 2_000), deadLeader(T0)],
    kind: 'retry',
    reason: 'LEADER_UNREACHABLE',
    decidedBy: 'leadership',
    at: T0 + 2_500,
    reprobeNow: false,
    says: /etcd-0 .* is the leader and unreachable on every path \(direct http:\/\/127\.0\.0\.1:4001 refused\) for 2 s.*we look again at/,
  },
  {
    name: 'the unreachable leader inside the grace window: grace ends first',
    samples: [deadLeader(T0 - 59_000), deadLeader(T0)],
    incident: { attempt: 5 },
    kind: 'retry',
    reason: 'LEADER_UNREACHABLE',
    decidedBy: 'leadership',
    at: T0 + 1_000,
  },
  {
    name: 'the unreachable leader past the grace window',
    samples: [deadLeader(T0 - 60_000), deadLeader(T0 - 30_000), deadLeader(T0)],
    kind: 'approve',
    reason: 'LEADER_UNREACHABLE_PAST_GRACE',
    leaderMove: 'skipped',
    decidedBy: 'leadership',
    says: /unreachable on every path \(direct http:\/\/127\.0\.0\.1:4001 refused\) for 60 s.*approved without a leader move/,
  },
  {
    name: 'past the grace window but removal without a move is off',
    samples: [deadLeader(T0 - 60_000), deadLeader(T0)],
    policy: { allowRemoveWithoutLeaderMove: false },
    kind: 'block',
    reason: 'REMOVE_WITHOUT_MOVE_DISABLED',
    decidedBy: 'leadership',
  },
  {
    name: 'the unreachable leader, not yet confirmed',
    samples: [deadLeader(T0)],
    kind: 'retry',
    reason: 'LEADER_UNREACHABLE_UNCONFIRMED',
    decidedBy: 'leadership',
    at: T0 + ET,
    reprobeNow: false,
  },
  {
    name: 'grace 0s: one probe never removes the leader',
    samples: [deadLeader(T0)],
    policy: { graceMs: 0 },
    kind: 'retry',
    reason: 'LEADER_UNREACHABLE_UNCONFIRMED',
    decidedBy: 'leadership',
    at: T0 + ET,
    says: /not yet across one election timeout/,
  },
  {
    name: 'grace 0s: two probes closer than one election timeout',
    samples: [deadLeader(T0 - 21), deadLeader(T0)],
    policy: { graceMs: 0 },
    kind: 'retry',
    reason: 'LEADER_UNREACHABLE_UNCONFIRMED',
    decidedBy: 'leadership',
  },
  {
    name: 'grace 0s: two probes one election timeout apart',
    samples: [deadLeader(T0 - ET), deadLeader(T0)],
    policy: { graceMs: 0 },
    kind: 'approve',
    reason: 'LEADER_UNREACHABLE_PAST_GRACE',
    leaderMove: 'skipped',
    decidedBy: 'leadership',
  },
  {
    name: 'an election in progress',
    samples: [cluster(T0, 3, { leader: 'none', override: { 0: down } })],
    kind: 'retry',
    reason: 'ELECTION_IN_PROGRESS',
    decidedBy: 'leadership',
    at: T0 + ET,
    reprobeNow: false,
  },
  {
    name: 'the leader fails TLS on every path',
    samples: [cluster(T0, 3, { override: { 0: { paths: { direct: 'tls', 'exec-relay': 'tls' } } } })],
    kind: 'block',
    reason: 'TLS_FAILED',
    decidedBy: 'leadership',
    says: /fix the client certificate or CA used for http:\/\/127\.0\.0\.1:4001 and exec-relay:\/\/etcd-0\.$/,
  },
  {
    name: 'the leader rejects our user on every path',
    samples: [cluster(T0, 3, { override: { 0: { paths: 'auth' } } })],
    kind: 'block',
    reason: 'AUTH_FAILED',
    decidedBy: 'leadership',
    says: /Every path to etcd-0 .* fails on credentials \(direct http:\/\/127\.0\.0\.1:4001 rejected our credentials: etcdserver: invalid auth token\).*fix the etcd user\.$/,
  },
  {
    name: 'a follower failing TLS needs no credentials',
    samples: [cluster(T0, 3, { leader: 1, override: { 0: { paths: 'tls' } } })],
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    decidedBy: 'leadership',
  },
  {
    name: "the leader's machine is gone",
    samples: [deadLeader(T0)],
    targetGone: 'its Machine wl-0 is being deleted',
    kind: 'approve',
    reason: 'LEADER_GONE',
    leaderMove: 'skipped',
    decidedBy: 'leadership',
    says: /The leader etcd-0 .* is gone: its Machine wl-0 is being deleted, and the followers still name it leader/,
  },
  {
    name: "the leader's machine is gone but removal without a move is off",
    samples: [deadLeader(T0)],
    targetGone: 'its Machine wl-0 is being deleted',
    policy: { allowRemoveWithoutLeaderMove: false },
    kind: 'block',
    reason: 'REMOVE_WITHOUT_MOVE_DISABLED',
    decidedBy: 'leadership',
  },
  {
    name: "the leader's machine is gone, and quorum is not safe",
    samples: [cluster(T0, 3, { leader: 0, override: { 0: down, 2: down } })],
    targetGone: 'its Machine wl-0 is being deleted',
    kind: 'block',
    reason: 'QUORUM_AT_RISK',
    decidedBy: 'quorum-gate',
  },
  {
    name: "a follower's machine is gone",
    samples: [cluster(T0, 3, { leader: 1, override: { 0: down } })],
    targetGone: 'its Machine wl-0 is being deleted',
    kind: 'approve',
    reason: 'TARGET_IS_FOLLOWER',
    decidedBy: 'leadership',
  },
];

describe('plan', () => {
  it.each(rows)('$name → $kind $reason', (row) => {
    const d = plan(input(row));
    expect(d.kind).toBe(row.kind);
    expect(d.reason).toBe(row.reason);
    expect(d.evidence.decidedBy).toBe(row.decidedBy);
    if (row.says) expect(d.message).toMatch(row.says);
    if (row.at !== undefined) expect(d).toMatchObject({ kind: 'retry', at: row.at });
    if (row.reprobeNow !== undefined) expect(d).toMatchObject({ reprobeNow: row.reprobeNow });
    if (row.leaderMove !== undefined) expect(d).toMatchObject({ leaderMove: row.leaderMove });
    // One plain sentence that names the target.
    expect(d.message).toContain(row.target ?? id(0));
    expect(d.message).toMatch(/\.$/);
    expect(d.message.split(/\.\s+[A-Z]/)).toHaveLength(1);
    expect(() => JSON.stringify(d.evidence)).not.toThrow();
  });

  it.each(rows)('$name: the reason table lets $reason be a $kind', (row) => {
    const d = plan(input(row));
    expect(reasonRow(d.reason).outcomes).toContain(d.kind);
  });

  it('hands move-leader the ranked candidates and the answering paths in policy order', () => {
    const v = view(T0, [
      { i: 0, leader: 0, paths: { direct: 'ok', 'port-forward': 'refused', 'exec-relay': 'ok' } },
      { i: 1, leader: 0, applied: 90 },
      { i: 2, leader: 0, applied: 110 },
      { i: 3, leader: 0, applied: 100 },
      { i: 4, leader: 0, applied: 120 },
    ]);
    const d = plan(input({ samples: [v], policy: { pathOrder: ['exec-relay', 'port-forward', 'direct'] }, incident: { excludeCandidates: [id(4)] } }));
    expect(d).toMatchObject({ kind: 'move-leader', leaderId: id(0), candidates: [id(2), id(3), id(1)], paths: ['exec-relay', 'direct'] });
  });

  it('carries the gate figures, the judgement and the reports as evidence', () => {
    const d = plan(input({ samples: [deadLeader(T0 - 2_000), deadLeader(T0)] }));
    expect(d.evidence).toMatchObject({
      targetId: id(0),
      gate: { votingNow: 3, votingAfter: 2, unhealthyAfter: 0, healthyAfter: 2, needed: 2 },
      judgement: { verdict: 'LEADER_UNREACHABLE', leaderId: id(0), term: 2, since: T0 - 2_000 },
      reports: [
        { memberId: id(1), leaderId: id(0), term: 2 },
        { memberId: id(2), leaderId: id(0), term: 2 },
      ],
    });
  });

  it('says the grace window in the evidence of each decision on an unreachable leader, and of a recovery', () => {
    // The grace is 60 s by the fixtures' policy; the streak starts at the first sample seen down.
    const grace = (samples: ClusterView[]) => plan(input({ samples })).evidence.grace;
    expect(grace([deadLeader(T0 - 2_000), deadLeader(T0)])).toEqual({ since: T0 - 2_000, endsAt: T0 + 58_000 });
    expect(grace([deadLeader(T0 - 60_000), deadLeader(T0)])).toEqual({ since: T0 - 60_000, endsAt: T0 });
    expect(grace([deadLeader(T0 - 2 * ET), deadLeader(T0 - ET), healthy])).toEqual({ since: T0 - 2 * ET, endsAt: T0 - 2 * ET + 60_000 });
    expect(plan(input({ samples: [healthy] })).evidence.grace).toBeUndefined();
  });

  it('checks the deadline before anything else, even with no probe', () => {
    const d = plan(input({ samples: [], now: 31 * MIN, incident: { openedAt: 0 } }));
    expect(d.reason).toBe('INCIDENT_DEADLINE_EXCEEDED');
  });

  it('backs off by the incident attempt', () => {
    const samples = [cluster(T0, 3, { override: { 0: down, 1: down, 2: down } })];
    const at = (attempt: number): number => (plan(input({ samples, incident: { attempt }, random: 0.999 })) as { at: number }).at;
    expect(at(0)).toBeLessThan(T0 + 5_000);
    expect(at(3)).toBeGreaterThan(T0 + 39_000);
    expect(at(3)).toBeLessThan(T0 + 40_000);
    expect(at(9)).toBeLessThan(T0 + 300_000);
  });

  it('approveLeaderGone is plan with the gone flag', () => {
    const d = approveLeaderGone(input({ samples: [deadLeader(T0)] }));
    expect(d).toMatchObject({ kind: 'approve', reason: 'LEADER_GONE', leaderMove: 'skipped' });
  });
});
