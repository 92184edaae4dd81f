// THE fault matrix (issue 10 §1), as one table: each row a fault on a real lab, what the pipeline
// must do about it, and what it must say. run-matrix.ts runs every row; matrix.test.ts runs the
// rows marked fast. Setups are the existing scenario tests' (test/integration/e2e, scenarios).
import { randomUUID } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { createEtcd3Transport } from '../../functions/adapters/etcd/index.ts';
import { etcd3Options } from '../../functions/adapters/etcd/member-client.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import type { Lab, LabMember } from '../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../infra/runtime/runtime.ts';
import { startTlsLab, wrongClientCert } from './tls-cluster.ts';
import { followersOf, gateOf, membershipIs, removedWithNewLeader } from './lab-checks.ts';
import { twoRemediatorsAtOnce } from './two-remediators-case.ts';
import { kubeCases } from './kube-cases.ts';
import { awsCases } from './aws-cases.ts';
import { maintenanceCases } from './maintenance-cases.ts';
import { check, hostOf, injectedUntilLeader, retriesWith, says, type CaseContext, type MatrixCase } from './harness.ts';

/** The leader path fault cases (3, 4, 5): removed without a move once the grace window passes. */
function unreachableLeader(n: number, name: string, members: 3 | 5, fault: 'cut' | 'blackhole' | { delayMs: number }, said: RegExp, fast = false): MatrixCase {
  return {
    n,
    name,
    members,
    expected: 'removed',
    reason: 'LEADER_UNREACHABLE_PAST_GRACE',
    fast,
    // A blackholed probe costs a whole call deadline; the window must outlast two of them (seed-case.test.ts).
    policy: { graceMs: 3_000 },
    async arrange(lab) {
      const leader = await lab.leader();
      await lab.fault(leader.name, fault);
      return { targets: [leader] };
    },
    async verify({ lab, pipeline, arranged }, { outcomes, deciding }) {
      const leader = arranged.targets[0]!;
      const o = outcomes[0]!;
      const waited = retriesWith(pipeline, 'LEADER_UNREACHABLE');
      return [
        ...says('approval', deciding.message, [leader.name, hostOf(leader.clientUrl)]),
        ...check(waited.length > 0, 'no LEADER_UNREACHABLE retry inside the grace window'),
        ...says('grace retry', waited[0] ?? '', [leader.name, hostOf(leader.clientUrl)]),
        ...check(said.test(waited[0] ?? ''), `grace retry does not say ${String(said)}: ${waited[0]?.slice(0, 300)}`),
        ...check(gateOf(deciding.evidence).reason === 'QUORUM_SAFE', `evidence.gate ${JSON.stringify(deciding.evidence.gate)}`),
        ...check(pipeline.calls.moveLeader.length === 0, `MoveLeader sent to an unreachable leader: ${pipeline.calls.moveLeader.join(',')}`),
        ...removedWithNewLeader(o, leader, 'skipped'),
        ...(await membershipIs(lab, [leader])),
      ];
    },
  };
}

/** Submits every target at once; resolves with each incident's final event, in the order of `targets`. */
async function reportTogether(ctx: CaseContext, timeoutMs: number): Promise<TerminalEvent[]> {
  const now = new Date().toISOString();
  return Promise.all(
    ctx.arranged.targets.map(async (m) => {
      const incidentId = randomUUID();
      const ended = ctx.pipeline.runtime.waitForOutcome({ clusterId: 'lab', incidentId }, timeoutMs);
      await ctx.pipeline.runtime.submit({
        incidentId,
        clusterId: 'lab',
        target: { memberName: m.name },
        reason: 'matrix',
        source: 'matrix',
        observedAt: now,
        at: now,
      });
      return ended;
    }),
  );
}

/** MemberRemove behind the pipeline's back, as another operator would; etcd refuses it for a few seconds after boot. */
async function removeByHand(lab: Lab, victim: LabMember): Promise<void> {
  const via = lab.members.find((m) => m.id !== victim.id)!;
  const transport = createEtcd3Transport();
  try {
    await waitFor(
      async () => {
        await transport.client({ endpoint: via.directUrl, path: 'direct' }).memberRemove(victim.id, 2_000);
        return true;
      },
      { timeoutMs: 20_000, intervalMs: 300, what: `MemberRemove ${victim.name} by hand` },
    );
  } finally {
    await transport.close();
  }
}

export const matrixCases: MatrixCase[] = [
  {
    n: 1,
    name: 'follower-sick',
    members: 3,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    fast: true,
    async arrange(lab) {
      const { followers } = await followersOf(lab);
      return { targets: [followers[0]!] };
    },
    async verify({ lab, pipeline, arranged }, { outcomes, deciding }) {
      const target = arranged.targets[0]!;
      const o = outcomes[0]!;
      return [
        ...says('approval', deciding.message, [target.name]),
        ...check(gateOf(deciding.evidence).reason === 'QUORUM_SAFE', `evidence.gate ${JSON.stringify(deciding.evidence.gate)}`),
        ...check(o.detailType === 'RemediationCompleted' && o.detail.leaderMove === 'not-needed', 'leaderMove is not not-needed'),
        ...check(pipeline.calls.moveLeader.length === 0, 'a MoveLeader was sent for a follower'),
        ...check(JSON.stringify(pipeline.calls.removed) === JSON.stringify([target.id]), `removed ${pipeline.calls.removed.join(',')}`),
        ...(await membershipIs(lab, [target])),
      ];
    },
  },
  {
    n: 2,
    name: 'leader-sick-reachable',
    members: 5,
    expected: 'removed',
    reason: 'LEADER_MOVED',
    async arrange(lab) {
      return { targets: [await lab.leader()] };
    },
    async verify({ lab, pipeline, arranged }, { outcomes, deciding }) {
      const leader = arranged.targets[0]!;
      const o = outcomes[0]!;
      const moved = pipeline.events.find((e) => e.detailType === 'LeaderMoved')?.detail as { from?: string; to?: string; path?: string } | undefined;
      return [
        ...says('approval', deciding.message, [leader.name, `direct ${leader.clientUrl}`]),
        ...check(moved?.from === leader.id && moved.path === 'direct', `LeaderMoved ${JSON.stringify(moved)}`),
        ...check(JSON.stringify(pipeline.calls.moveLeader) === JSON.stringify([moved?.to]), `MoveLeader calls ${pipeline.calls.moveLeader.join(',')}`),
        ...removedWithNewLeader(o, leader, 'moved'),
        ...(await membershipIs(lab, [leader])),
      ];
    },
  },
  unreachableLeader(3, 'leader-path-cut', 3, 'cut', /refused/, true),
  unreachableLeader(4, 'leader-blackholed', 5, 'blackhole', /timed out/),
  // 1.5 s of delay against the lab policy's 1 s call deadline: to us, the same as a blackhole.
  unreachableLeader(5, 'leader-slow', 3, { delayMs: 1_500 }, /timed out|deadline/),
  {
    n: 6,
    name: 'leader-frozen-then-thawed',
    members: 3,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    async arrange(lab, checker) {
      const leader = await lab.leader();
      const at = Date.now();
      lab.stop(leader.name);
      // Thawed mid-incident: once the incident has started probing and the others have elected.
      setTimeout(() => {
        if (lab.runState(leader.name) === 'stopped') lab.cont(leader.name);
      }, 2_500);
      await injectedUntilLeader(lab, checker, at, [leader.name]);
      return {
        targets: [leader],
        cleanup: () => {
          if (lab.runState(leader.name) === 'stopped') lab.cont(leader.name);
        },
      };
    },
    async verify({ lab, pipeline, arranged }, { outcomes, deciding }) {
      const leader = arranged.targets[0]!;
      const o = outcomes[0]!;
      return [
        ...says('approval', deciding.message, [leader.name]),
        ...check(
          !pipeline.events.some((e) => e.detailType === 'RemediationApproved' && (e.detail as { reason: string }).reason === 'LEADER_UNREACHABLE_PAST_GRACE'),
          'a frozen leader was removed as an unreachable leader',
        ),
        ...removedWithNewLeader(o, leader, 'not-needed'),
        ...(await membershipIs(lab, [leader])),
      ];
    },
  },
  {
    n: 7,
    name: 'leader-killed',
    members: 3,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    async arrange(lab, checker) {
      const leader = await lab.leader();
      const at = Date.now();
      await lab.kill(leader.name);
      await injectedUntilLeader(lab, checker, at, [leader.name]);
      return { targets: [leader] };
    },
    async verify({ lab, pipeline, arranged }, { outcomes, deciding }) {
      const leader = arranged.targets[0]!;
      const o = outcomes[0]!;
      return [
        ...says('approval', deciding.message, [leader.name]),
        ...check(gateOf(deciding.evidence).reason === 'QUORUM_SAFE', `evidence.gate ${JSON.stringify(deciding.evidence.gate)}`),
        ...check(pipeline.calls.moveLeader.length === 0, 'a MoveLeader was sent to a dead member'),
        ...removedWithNewLeader(o, leader),
        ...(await membershipIs(lab, [leader])),
      ];
    },
  },
  {
    n: 8,
    name: 'leader-changes-during-move',
    members: 3,
    expected: 'removed',
    // Which depends on the race the case sets up: the others elect a new leader (the target is a
    // follower at the next probe), or the thawed leader carries out the MoveLeader it had been sent.
    reason: 'TARGET_IS_FOLLOWER',
    alsoReasons: ['LEADER_MOVED'],
    async arrange(lab) {
      const leader = await lab.leader();
      return {
        targets: [leader],
        cleanup: () => {
          if (lab.runState(leader.name) === 'stopped') lab.cont(leader.name);
        },
      };
    },
    async act(ctx) {
      const { lab, pipeline, checker } = ctx;
      const leader = ctx.arranged.targets[0]!;
      // Between the probe and the move: the instant the pipeline is about to send MoveLeader (the
      // call log records it just before the call), the leader freezes, so the others elect one of
      // their own; it is thawed, a follower now, once they have.
      const log = pipeline.calls.moveLeader;
      let forced = false;
      log.push = (...ids: string[]): number => {
        if (!forced) {
          forced = true;
          const at = Date.now();
          lab.stop(leader.name);
          void injectedUntilLeader(lab, checker, at, [leader.name]).finally(() => lab.cont(leader.name));
        }
        return Array.prototype.push.apply(log, ids);
      };
      return [await pipeline.remediate(leader.name, 45_000)];
    },
    async verify({ lab, pipeline, arranged }, { outcomes, deciding }) {
      const leader = arranged.targets[0]!;
      const o = outcomes[0]!;
      const retried = pipeline.events.flatMap((e) => (e.detailType === 'RetryRequested' ? [(e.detail as { reason: string }).reason] : []));
      return [
        ...check(pipeline.calls.moveLeader.length >= 1, 'no MoveLeader was sent, so the election did not fall between probe and move'),
        // The pipeline noticed the election (its move failed, or its next probe saw no settled or
        // another leader), or the election went to the very candidate the move named, which the
        // pipeline then verified leads.
        ...check(
          retried.some((r) =>
            ['LEADER_TRANSFER_TIMEOUT', 'LEADER_CHANGED', 'ELECTION_IN_PROGRESS', 'LEADER_UNREACHABLE', 'LEADER_UNREACHABLE_UNCONFIRMED'].includes(r),
          ) ||
            (o.detailType === 'RemediationCompleted' && pipeline.calls.moveLeader.at(-1) === o.detail.newLeader.id && deciding.reason === 'LEADER_MOVED'),
          `retries ${[...new Set(retried)].join(',') || 'none'}, MoveLeader ${pipeline.calls.moveLeader.join(',')}, approved ${deciding.reason}`,
        ),
        ...says('approval', deciding.message, [leader.name]),
        ...removedWithNewLeader(o, leader),
        ...(await membershipIs(lab, [leader])),
      ];
    },
  },
  {
    n: 9,
    name: 'move-candidate-dies',
    members: 5,
    expected: 'removed',
    reason: 'LEADER_MOVED',
    async arrange(lab) {
      return { targets: [await lab.leader()] };
    },
    async act(ctx) {
      const { lab, pipeline } = ctx;
      const leader = ctx.arranged.targets[0]!;
      // The first candidate is SIGKILLed the instant the pipeline is about to send MoveLeader to it.
      const log = pipeline.calls.moveLeader;
      log.push = (...ids: string[]): number => {
        const candidate = lab.members.find((m) => m.id === ids[0]);
        if (log.length === 0 && candidate) {
          ctx.arranged.roles = { candidate };
          void lab.kill(candidate.name);
        }
        return Array.prototype.push.apply(log, ids);
      };
      return [await pipeline.remediate(leader.name, 45_000)];
    },
    async verify({ lab, pipeline, arranged }, { outcomes, deciding }) {
      const leader = arranged.targets[0]!;
      const dead = arranged.roles?.candidate;
      const o = outcomes[0]!;
      const moved = pipeline.events.find((e) => e.detailType === 'LeaderMoved')?.detail as { to?: string } | undefined;
      return [
        ...check(dead !== undefined, 'no MoveLeader was sent'),
        ...check(pipeline.calls.moveLeader[0] === dead?.id && pipeline.calls.moveLeader.length >= 2, `MoveLeader calls ${pipeline.calls.moveLeader.join(',')}`),
        ...check(moved?.to !== undefined && moved.to !== dead?.id, `LeaderMoved to ${moved?.to}, the dead candidate ${dead?.id}`),
        ...says('approval', deciding.message, [leader.name, `direct ${leader.clientUrl}`]),
        ...removedWithNewLeader(o, leader, 'moved'),
        ...check(o.detailType === 'RemediationCompleted' && o.detail.newLeader.id !== dead?.id, 'the dead candidate named the new leader'),
        ...(await membershipIs(lab, [leader])),
      ];
    },
  },
  {
    n: 10,
    name: 'two-sick-of-3',
    members: 3,
    expected: 'blocked',
    reason: 'QUORUM_AT_RISK',
    fast: true,
    // scenarios.test.ts: the target is the leader, its path cut, and one follower is dead.
    async arrange(lab) {
      const { leader, followers } = await followersOf(lab);
      const dead = followers[0]!;
      await lab.kill(dead.name);
      await lab.fault(leader.name, 'cut');
      return { targets: [leader], roles: { dead } };
    },
    async verify({ lab, pipeline, arranged }, { deciding }) {
      const target = arranged.targets[0]!;
      const dead = arranged.roles!.dead!;
      const gate = gateOf(deciding.evidence);
      return [
        ...says('block', deciding.message, [target.name, dead.name]),
        ...check(gate.votingAfter === 2 && gate.healthyAfter === 1 && gate.needed === 2, `evidence.gate ${JSON.stringify(gate)}`),
        ...check(pipeline.calls.memberRemove.length === 0, `MemberRemove sent: ${pipeline.calls.memberRemove.join(',')}`),
        ...check(pipeline.calls.moveLeader.length === 0, `MoveLeader sent: ${pipeline.calls.moveLeader.join(',')}`),
        ...(await membershipIs(lab, [])),
      ];
    },
  },
  {
    n: 11,
    name: 'two-sick-of-5',
    members: 5,
    expected: 'removed+removed',
    reason: 'TARGET_IS_FOLLOWER+TARGET_IS_FOLLOWER',
    fast: true,
    // Two removals in a row leave 3 of 5 before any replacement joins: only a policy that allows shrinking does that.
    policy: { allowShrink: true },
    timeoutMs: 60_000,
    async arrange(lab) {
      const { followers } = await followersOf(lab);
      const [a, b] = [followers[0]!, followers[1]!];
      await lab.kill(a.name);
      await lab.kill(b.name);
      return { targets: [a, b] };
    },
    act: (ctx) => reportTogether(ctx, 60_000),
    async verify({ lab, pipeline, arranged }, { outcomes, deciding }) {
      const [a, b] = arranged.targets as [LabMember, LabMember];
      const firstId = pipeline.calls.removed[0];
      const firstDone = outcomes.map((o) => Date.parse(o.detail.at)).indexOf(Math.min(...outcomes.map((o) => Date.parse(o.detail.at))));
      const locked = retriesWith(pipeline, 'CLUSTER_LOCKED');
      return [
        ...says('approval', deciding.message, [b.name]),
        ...check(new Set(pipeline.calls.removed).size === 2, `removed ${pipeline.calls.removed.join(',')}`),
        // One at a time and in order: the incident that completed first is the one whose member went first.
        ...check(arranged.targets[firstDone]?.id === firstId, `completed first: ${arranged.targets[firstDone]?.name}, removed first: ${firstId}`),
        ...check(locked.length > 0, 'the second incident never waited for the cluster lock'),
        ...says('lock wait', locked[0] ?? '', ['another remediation holds the lock']),
        ...(await membershipIs(lab, [a, b])),
      ];
    },
  },
  {
    n: 12,
    name: 'stuck-learner-present',
    members: 3,
    expected: 'blocked',
    reason: 'MEMBER_NOT_READY',
    // Cleanup off: the refusal stands as KCP's does (with it on, a learner is waited for, then
    // removed as stuck: test/integration/e2e/replacement.test.ts).
    policy: { stuckLearnerAfterMs: 0 },
    async arrange(lab) {
      const { followers } = await followersOf(lab);
      const learner = await lab.addLearner({ timeoutMs: 20_000 });
      // Stuck: it never catches up to promotion.
      lab.stop(learner.name);
      return {
        targets: [followers[0]!],
        roles: { learner },
        cleanup: () => {
          if (lab.runState(learner.name) === 'stopped') lab.cont(learner.name);
        },
      };
    },
    async verify({ lab, pipeline, arranged }, { deciding }) {
      const target = arranged.targets[0]!;
      const learner = arranged.roles!.learner!;
      return [
        ...says('block', deciding.message, [target.name, learner.name]),
        ...check(
          JSON.stringify(deciding.evidence).includes(learner.id),
          `evidence does not name the learner ${learner.id}: ${JSON.stringify(deciding.evidence).slice(0, 300)}`,
        ),
        ...check(pipeline.calls.memberRemove.length === 0, `MemberRemove sent: ${pipeline.calls.memberRemove.join(',')}`),
        ...check((await lab.memberList()).length === 4, 'membership changed'),
      ];
    },
  },
  {
    n: 13,
    name: 'target-already-removed',
    members: 3,
    expected: 'blocked',
    reason: 'TARGET_NOT_FOUND',
    fast: true,
    async arrange(lab) {
      const { followers } = await followersOf(lab);
      const gone = followers[0]!;
      await removeByHand(lab, gone);
      await lab.kill(gone.name);
      return { targets: [gone] };
    },
    async verify({ lab, pipeline, arranged }, { deciding }) {
      const target = arranged.targets[0]!;
      const listed = JSON.stringify(deciding.evidence.members ?? null);
      return [
        ...says('block', deciding.message, [target.name]),
        // The evidence is the member list etcd answered (by name), without the target.
        ...check(
          lab.members.every((m) => listed.includes(m.name) === (m.id !== target.id)),
          `evidence.members ${listed.slice(0, 300)}`,
        ),
        ...check(pipeline.calls.memberRemove.length === 0, `MemberRemove sent: ${pipeline.calls.memberRemove.join(',')}`),
        ...(await membershipIs(lab, [target])),
      ];
    },
  },
  {
    n: 14,
    name: 'no-quorum',
    members: 3,
    expected: 'blocked',
    reason: 'NO_QUORUM',
    fast: true,
    async arrange(lab, checker) {
      const { followers } = await followersOf(lab);
      // The case takes the quorum away itself: the whole run is injected unavailability.
      checker.injected(Date.now());
      await lab.kill(followers[0]!.name);
      await lab.kill(followers[1]!.name);
      return { targets: [followers[0]!], roles: { other: followers[1]! } };
    },
    async verify({ pipeline, arranged }, { deciding }) {
      const target = arranged.targets[0]!;
      return [
        ...says('block', deciding.message, [target.name]),
        ...check(pipeline.calls.memberRemove.length === 0, `MemberRemove sent: ${pipeline.calls.memberRemove.join(',')}`),
      ];
    },
  },
  {
    n: 15,
    name: 'lock-held-by-another-incident',
    members: 3,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    async arrange(lab) {
      const { leader, followers } = await followersOf(lab);
      // Another incident's lock, as the guard writes it, on a 4 s lease that is never renewed (its holder died).
      const etcd = new Etcd3(etcd3Options(leader.directUrl));
      try {
        const grant = await etcd.leaseClient.leaseGrant({ TTL: 4 });
        const value = JSON.stringify({ owner: 'other-incident/elsewhere', since: Date.now(), lease: grant.ID });
        await etcd.kv.put({ key: Buffer.from('/etcd-remediator/lock'), value: Buffer.from(value), lease: grant.ID });
      } finally {
        etcd.close();
      }
      return { targets: [followers[0]!] };
    },
    async verify({ lab, pipeline, arranged }, { deciding }) {
      const target = arranged.targets[0]!;
      const locked = retriesWith(pipeline, 'CLUSTER_LOCKED');
      return [
        ...says('approval', deciding.message, [target.name]),
        ...check(locked.length > 0, 'never waited for the lock another incident held'),
        ...says('lock wait', locked[0] ?? '', ['other-incident']),
        ...(await membershipIs(lab, [target])),
      ];
    },
  },
  {
    n: 16,
    name: 'grace-not-passed-then-heals',
    members: 3,
    expected: 'recovered',
    fast: true,
    reason: 'TARGET_RECOVERED',
    policy: { graceMs: 10_000 },
    async arrange(lab) {
      const leader = await lab.leader();
      await lab.fault(leader.name, 'cut');
      return { targets: [leader] };
    },
    async act(ctx) {
      const leader = ctx.arranged.targets[0]!;
      // The path heals the moment the pipeline first says it waits out the grace window.
      const healed = ctx.pipeline.runtime.bus.subscribe((e) => {
        if (e.detailType === 'RetryRequested' && (e.detail as { reason: string }).reason === 'LEADER_UNREACHABLE') void ctx.lab.fault(leader.name, 'heal');
      });
      try {
        return [await ctx.pipeline.remediate(leader.name, 45_000)];
      } finally {
        healed();
      }
    },
    async verify({ lab, pipeline, arranged }, { deciding }) {
      const leader = arranged.targets[0]!;
      const waited = retriesWith(pipeline, 'LEADER_UNREACHABLE');
      const judgement = (deciding.evidence.judgement ?? {}) as { verdict?: string; leaderId?: string };
      return [
        ...check(waited.length > 0, 'no LEADER_UNREACHABLE retry inside the grace window'),
        ...says('grace retry', waited[0] ?? '', [leader.name, hostOf(leader.clientUrl)]),
        // It answers again on the very path that had been cut, and says it recovered.
        ...says('close', deciding.message, [leader.name, `direct ${leader.clientUrl}`, 'recovered', 'nothing removed']),
        ...check(judgement.verdict === 'LEADER_REACHABLE' && judgement.leaderId === leader.id, `evidence.judgement ${JSON.stringify(judgement)}`),
        ...check(
          pipeline.calls.moveLeader.length === 0 && pipeline.calls.memberRemove.length === 0,
          `touched the recovered leader: MoveLeader ${pipeline.calls.moveLeader.length}, MemberRemove ${pipeline.calls.memberRemove.length}`,
        ),
        ...check((await lab.leader()).id === leader.id, 'the recovered member no longer leads: something moved it'),
        ...(await membershipIs(lab, [])),
      ];
    },
  },
  {
    n: 17,
    name: 'wrong-client-cert',
    members: 3,
    expected: 'blocked',
    reason: 'TLS_FAILED',
    alsoReasons: ['AUTH_FAILED'],
    fast: true,
    // The mTLS lab of mtls.test.ts; the pipeline holds a certificate of another CA, the checker the right one.
    async start() {
      const tls = await startTlsLab(3);
      return { lab: tls.lab, checkerTls: tls.certs.files, pipelineTls: wrongClientCert(tls) };
    },
    async arrange(lab) {
      const { followers } = await followersOf(lab);
      return { targets: [followers[0]!] };
    },
    async verify({ lab, pipeline, arranged }, { outcomes, deciding }) {
      const target = arranged.targets[0]!;
      const retries = pipeline.events.filter((e) => e.detailType === 'RetryRequested').length;
      const o = outcomes[0]!;
      return [
        ...says('block', deciding.message, [target.name]),
        ...says(
          'block',
          deciding.message,
          lab.members.map((m) => hostOf(m.clientUrl)),
        ),
        // No retry storm: credentials that fail now fail next time too.
        ...check(retries === 0, `${retries} retries before the block`),
        ...check(o.detailType === 'RemediationBlocked', 'not blocked'),
        ...check(pipeline.calls.memberRemove.length === 0 && pipeline.calls.moveLeader.length === 0, 'etcd was asked to change something'),
        ...check((await lab.memberList()).length === 3, 'membership changed'),
      ];
    },
  },
  twoRemediatorsAtOnce,
  {
    n: 19,
    name: 'every-path-slowed',
    members: 3,
    expected: 'removed',
    reason: 'TARGET_IS_FOLLOWER',
    // As the e2e lock-no-fallback test: a delay on every path against a 2 s call deadline.
    policy: { callTimeoutMs: 2_000, maxAttempts: 10 },
    timeoutMs: 120_000,
    async arrange(lab) {
      const { followers } = await followersOf(lab);
      for (const m of lab.members) await lab.fault(m.name, { delayMs: 800 });
      return { targets: [followers[0]!] };
    },
    async verify({ lab, pipeline, arranged }, { deciding }) {
      const target = arranged.targets[0]!;
      const slow = retriesWith(pipeline, 'CLUSTER_UNREACHABLE');
      return [
        ...says('approval', deciding.message, [target.name]),
        ...check(slow.length > 0, 'never said the network was slow'),
        ...says('slow probe', slow[0] ?? '', ['the network may be slow', 'raise the call deadline']),
        ...(await membershipIs(lab, [target])),
      ];
    },
  },
  ...kubeCases,
  ...awsCases,
  ...maintenanceCases,
];
