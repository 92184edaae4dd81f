// Our quorum gate against Cluster API KubeadmControlPlane's rule (kcp-oracle.ts, a port of
// targetEtcdClusterHealthy): first the port against KCP's own table test, then thousands of
// random memberships where KCP's refusal must always be ours too. We may be stricter, never looser.
import { afterAll, describe, expect, it } from 'vitest';
import { quorumGate } from '../../../../functions/core/plan/quorum-gate.ts';
import { noSpaceMembers } from '../../../../functions/core/removal/index.ts';
import type { ReasonCode } from '../../../../functions/core/common/decision.ts';
import type { PathName, Reachability } from '../../../../functions/core/common/types.ts';
import {
  etcdMemberHealthyCondition,
  targetEtcdClusterHealthy,
  type KcpAlarm,
  type KcpControlPlane,
  type KcpEtcdMember,
  type KcpMachine,
} from './kcp-oracle.ts';
import { id, nameOf, seeded, view, type MemberSpec } from '../fixtures.ts';

// --- The port against KCP's TestTargetEtcdClusterHealthy (remediation_test.go) --------------------

type Health = 'healthy' | 'unhealthy' | 'mhc-failed';
/** getMachine(ns, name, …): NodeRef "node-<name>"; an MHC-failed machine carries no etcd condition. */
const machine = (name: string, health: Health): KcpMachine => ({
  name,
  nodeRefName: `node-${name}`,
  ...(health === 'mhc-failed' ? {} : { etcdMemberHealthy: health === 'healthy' ? 'True' : 'False' }),
});
/** etcdMembers(machines): one member per Machine, named after its Node, id 0 as in the Go test. */
const membersOf = (machines: KcpMachine[]): KcpEtcdMember[] => machines.map((m) => ({ id: '0', name: m.nodeRefName!, isLearner: false }));

interface KcpRow {
  name: string;
  machines: KcpMachine[];
  /** Defaults to one member per machine. */
  members?: KcpEtcdMember[];
  alarms?: KcpAlarm[];
  add?: boolean;
  remove?: string;
  want: boolean;
}

const m1 = machine('m1-mhc-unhealthy', 'mhc-failed');
const healthy = (i: number): KcpMachine => machine(`m${i}-etcd-healthy`, 'healthy');
const sick = (i: number): KcpMachine => machine(`m${i}-etcd-unhealthy`, 'unhealthy');
const remove = m1.nodeRefName!;

const kcpRows: KcpRow[] = [
  { name: "Can't safely remove a member from a CP with one Machine", machines: [m1], remove, want: false },
  { name: 'Can safely remove a member from a CP with two Machines without additional etcd member failures', machines: [m1, healthy(2)], remove, want: true },
  {
    name: 'Can safely remove a member from a CP with two Machines when the etcd member being remediated is missing',
    machines: [m1, healthy(2)],
    members: membersOf([healthy(2)]),
    remove,
    want: true,
  },
  { name: "Can't safely remove a member from a CP with two Machines with one additional etcd member failure", machines: [m1, sick(2)], remove, want: false },
  {
    name: 'Can safely remove a member from a CP with three Machines without additional etcd member failures',
    machines: [m1, healthy(2), healthy(3)],
    remove,
    want: true,
  },
  {
    name: "Can't safely remove a member from a CP with three Machines with one additional etcd member failure",
    machines: [m1, sick(2), healthy(3)],
    remove,
    want: false,
  },
  {
    name: 'Can safely remove a member from a CP with three Machines when another etcd member is missing',
    machines: [m1, sick(2), healthy(3)],
    members: membersOf([m1, healthy(3)]),
    remove,
    want: true,
  },
  {
    name: 'Can safely remove a member from a CP with five Machines with less than 2 additional etcd member failures',
    machines: [m1, sick(2), healthy(3), healthy(4), healthy(5)],
    remove,
    want: true,
  },
  {
    name: "Can't safely remove a member from a CP with five Machines with 2 additional etcd member failures",
    machines: [m1, sick(2), sick(3), healthy(4), healthy(5)],
    remove,
    want: false,
  },
  {
    name: 'Can safely remove a member from a CP with seven Machines with less than 3 additional etcd member failures',
    machines: [m1, sick(2), sick(3), healthy(4), healthy(5), healthy(6), healthy(7)],
    remove,
    want: true,
  },
  {
    name: "Can't safely remove a member from a CP with seven Machines with 3 additional etcd member failures",
    machines: [m1, sick(2), sick(3), sick(4), healthy(5), healthy(6), healthy(7)],
    remove,
    want: false,
  },
  { name: 'Can safely add a member to a CP without Machines', machines: [], add: true, want: true },
  { name: 'Can safely add a member to a CP with one Machine', machines: [healthy(1)], add: true, want: true },
  { name: "Can't safely add a member to a CP with one Machine with unhealthy etcd member", machines: [sick(1)], add: true, want: false },
  {
    name: "Can't safely add a member to a CP with two Machine with one additional etcd member failure",
    machines: [healthy(1), sick(2)],
    add: true,
    want: false,
  },
  {
    name: "Can't safely add a member to a CP with four Machine with two additional etcd member failure",
    machines: [healthy(1), sick(2), sick(3), healthy(4)],
    add: true,
    want: false,
  },
  {
    name: "Can't safely add a member to a CP with a learner etcd member",
    machines: [healthy(1)],
    members: [{ id: '0', name: healthy(1).nodeRefName!, isLearner: true }],
    add: true,
    want: false,
  },
  {
    name: "Can't safely remove a member from a CP with a learner etcd member",
    machines: [m1, healthy(2)],
    members: [...membersOf([m1]), { id: '0', name: healthy(2).nodeRefName!, isLearner: true }],
    remove,
    want: false,
  },
  {
    name: "Can't safely remove a member from a CP with an etcd member starting up",
    machines: [m1, healthy(2)],
    members: [...membersOf([m1]), { id: '0', name: '', isLearner: false }],
    remove,
    want: false,
  },
  {
    name: 'Consider alarms from members not being removed when computing target etcd cluster status',
    machines: [m1, healthy(2)],
    members: [
      { id: '1', name: remove, isLearner: false },
      { id: '2', name: 'foo', isLearner: false },
    ],
    alarms: [{ memberId: '2', type: 'NOSPACE' }],
    remove,
    want: false,
  },
  {
    name: "Can safely remove a member when it doesn't have a corresponding machine and it has no alarm",
    machines: [m1, healthy(2)],
    members: [
      { id: '1', name: remove, isLearner: false },
      { id: '2', name: 'foo', isLearner: false },
    ],
    remove,
    want: true,
  },
  {
    name: 'Ignore alarms from external members being removed when computing target etcd cluster status',
    machines: [{ ...m1, etcdMemberHealthy: 'True' }, healthy(2)],
    members: [
      { id: '1', name: remove, isLearner: false },
      { id: '2', name: 'bar', isLearner: false },
    ],
    alarms: [{ memberId: '2', type: 'CORRUPT' }],
    remove: 'bar',
    want: true,
  },
];

describe("the KCP oracle reproduces KCP's own TestTargetEtcdClusterHealthy", () => {
  it.each(kcpRows)('$name', (row) => {
    const cp: KcpControlPlane = { machines: row.machines, etcdMembers: row.members ?? membersOf(row.machines), etcdMembersAlarms: row.alarms ?? [] };
    expect(targetEtcdClusterHealthy(cp, row.add ?? false, row.remove ?? '')).toBe(row.want);
  });
});

// --- Random memberships ---------------------------------------------------------------------------

/** One member as drawn: what etcd and our probe see, and whether KCP has a Machine for it. */
interface Drawn {
  i: number;
  learner: boolean;
  unstarted: boolean;
  paths: Partial<Record<PathName, Reachability>>;
  alarm?: 'NOSPACE' | 'CORRUPT';
  errors: boolean;
  /** Whom this member names leader, when it answers. */
  leader: number | 'none';
  machine: boolean;
  /** KCP could not read this member (only drawn where our probe cannot either). */
  uninspected: boolean;
}

interface Membership {
  members: Drawn[];
  /** Index of the target, or 'absent' for a target that is not in the member list. */
  target: number | 'absent';
}

const ABSENT = 9;

function draw(random: () => number): Membership {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const n = 1 + Math.floor(random() * 7);
  const learners = Array.from({ length: n }, () => random() < 0.07);
  const voters = learners.flatMap((l, i) => (l ? [] : [i]));
  const leader: number | 'none' = voters.length === 0 || random() < 0.1 ? 'none' : pick(voters);
  const reachabilities: Partial<Record<PathName, Reachability>>[] = [
    { direct: 'ok' },
    { direct: 'ok' },
    { direct: 'ok' },
    { direct: 'ok' },
    { direct: 'ok' },
    { direct: 'ok' },
    { direct: 'refused' },
    { direct: 'timeout' },
    { direct: 'refused', 'exec-relay': 'timeout' },
    { direct: 'tls' },
    { direct: 'refused', 'exec-relay': 'ok' },
  ];
  const members = learners.map((learner, i): Drawn => {
    const paths = pick(reachabilities);
    const errors = random() < 0.06;
    const answers = Object.values(paths).includes('ok');
    const roll = random();
    // A few members see another leader or none: splits and elections.
    const seen = roll < 0.08 ? 'none' : roll < 0.12 && voters.length > 0 ? pick(voters) : leader;
    return {
      i,
      learner,
      unstarted: random() < 0.04,
      paths,
      ...(random() < 0.08 ? { alarm: pick(['NOSPACE', 'CORRUPT'] as const) } : {}),
      errors,
      leader: seen,
      machine: random() < 0.85,
      uninspected: (!answers || errors) && random() < 0.5,
    };
  });
  return { members, target: random() < 0.08 ? 'absent' : Math.floor(random() * n) };
}

/** The membership as our probe sees it. */
const ourSpecs = (m: Membership): MemberSpec[] =>
  m.members.map((d) => ({
    i: d.i,
    learner: d.learner,
    unstarted: d.unstarted,
    paths: d.paths,
    leader: d.leader,
    ...(d.alarm ? { alarms: [d.alarm] } : {}),
    ...(d.errors ? { errors: ['raft: stopped'] } : {}),
  }));

/** The membership as KCP sees it: the member list (names by Node), Machines, alarms. */
function kcpControlPlane(m: Membership): KcpControlPlane {
  const etcdMembers = m.members.map((d): KcpEtcdMember => ({ id: id(d.i), name: d.unstarted ? '' : nameOf(d.i), isLearner: d.learner }));
  const etcdMembersAlarms = m.members.flatMap((d): KcpAlarm[] => (d.alarm ? [{ memberId: id(d.i), type: d.alarm }] : []));
  const machines = m.members
    .filter((d) => d.machine)
    .map((d): KcpMachine => ({
      name: `m-${d.i}`,
      nodeRefName: nameOf(d.i),
      etcdMemberHealthy: etcdMemberHealthyCondition(nameOf(d.i), etcdMembers, etcdMembersAlarms, d.uninspected),
    }));
  return { etcdMembers, machines, etcdMembersAlarms };
}

const targetIndex = (m: Membership): number => (m.target === 'absent' ? ABSENT : m.target);

/** Why we refuse what KCP allows, in the words README.md's list uses. */
type Strictness =
  | 'target not in the member list'
  | 'a voter KCP counts healthy is unhealthy to us'
  | 'no quorum now'
  | 'a NOSPACE alarm stands'
  | 'unexplained';

function whyStricter(m: Membership, gate: { reason: ReasonCode }): Strictness {
  if (m.target === 'absent') return 'target not in the member list';
  const cp = kcpControlPlane(m);
  const kcpHealthy = (d: Drawn): boolean => {
    const machine = cp.machines.find((x) => x.nodeRefName === nameOf(d.i));
    return machine ? machine.etcdMemberHealthy === 'True' : !d.alarm;
  };
  const weSeeUnhealthy = (d: Drawn): boolean => !Object.values(d.paths).includes('ok') || d.errors || d.alarm === 'CORRUPT' || d.unstarted;
  if (m.members.some((d) => d.i !== m.target && !d.learner && weSeeUnhealthy(d) && kcpHealthy(d))) return 'a voter KCP counts healthy is unhealthy to us';
  if (gate.reason === 'NO_QUORUM') return 'no quorum now';
  if (gate.reason === 'ETCD_NO_SPACE') return 'a NOSPACE alarm stands';
  return 'unexplained';
}

const RUNS = 20_000;
const SEED = 20260907;

interface Tally {
  cases: number;
  kcpRefuses: number;
  weRefuse: number;
  weRefuseKcpAllows: number;
  weAllowKcpRefuses: number;
  /** Where we refuse and KCP allows, by our reason. */
  stricterBy: Partial<Record<ReasonCode, number>>;
  /** Where both refuse, by our reason. */
  bothBy: Partial<Record<ReasonCode, number>>;
  /** Where we refuse and KCP allows, by why. */
  stricterWhy: Partial<Record<Strictness, number>>;
}

const tally: Tally = { cases: 0, kcpRefuses: 0, weRefuse: 0, weRefuseKcpAllows: 0, weAllowKcpRefuses: 0, stricterBy: {}, bothBy: {}, stricterWhy: {} };
const looser: string[] = [];
const stricterExamples: Partial<Record<ReasonCode, string>> = {};

const bump = <K extends string>(counts: Partial<Record<K, number>>, key: K): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};

describe('our quorum gate against KCP over random memberships', () => {
  const random = seeded(SEED);
  for (let run = 0; run < RUNS; run++) {
    const m = draw(random);
    const seen = view(0, ourSpecs(m));
    // Our verdict: the quorum gate, then the plan's NOSPACE check. A NOSPACE alarm is no member
    // lost (the gate counts its member up), but nothing is removed while it stands.
    const quorum = quorumGate(seen, id(targetIndex(m)));
    const gate = quorum.ok && noSpaceMembers(seen).length > 0 ? { ok: false, reason: 'ETCD_NO_SPACE' as const, message: 'a NOSPACE alarm stands' } : quorum;
    const kcpAllows = targetEtcdClusterHealthy(kcpControlPlane(m), false, nameOf(targetIndex(m)));
    tally.cases++;
    if (!kcpAllows) tally.kcpRefuses++;
    if (!gate.ok) tally.weRefuse++;
    if (!gate.ok && kcpAllows) {
      tally.weRefuseKcpAllows++;
      bump(tally.stricterBy, gate.reason);
      bump(tally.stricterWhy, whyStricter(m, gate));
      stricterExamples[gate.reason] ??= JSON.stringify({ run, ...m });
    }
    if (!gate.ok && !kcpAllows) bump(tally.bothBy, gate.reason);
    if (gate.ok && !kcpAllows) {
      tally.weAllowKcpRefuses++;
      if (looser.length < 5) looser.push(`seed ${SEED} run ${run}: ${gate.reason} "${gate.message}" for ${JSON.stringify(m)}`);
    }
  }

  afterAll(() => {
    // Printed so a reader sees the figures behind "never looser than KCP".
    console.log(`KCP oracle: ${JSON.stringify(tally)}`);
  });

  it('refuses wherever KCP refuses', () => {
    expect(looser).toEqual([]);
    expect(tally.weAllowKcpRefuses).toBe(0);
  });

  it('covers both verdicts of each side, and each of our refusals', () => {
    expect(tally.kcpRefuses).toBeGreaterThan(RUNS / 10);
    expect(tally.cases - tally.kcpRefuses).toBeGreaterThan(RUNS / 10);
    const ours = new Set([...Object.keys(tally.stricterBy), ...Object.keys(tally.bothBy)]);
    for (const reason of ['TARGET_NOT_FOUND', 'LAST_MEMBER', 'NO_QUORUM', 'QUORUM_AT_RISK', 'MEMBER_NOT_READY']) expect(ours).toContain(reason);
  });

  it('is stricter than KCP only by the rules README.md lists: a missing target, quorum now, members KCP counts healthy that we see unhealthy, and a NOSPACE alarm', () => {
    // MEMBER_NOT_READY and LAST_MEMBER are KCP's own rules: they never refuse what KCP allows.
    expect(Object.keys(tally.stricterBy).sort(), JSON.stringify(stricterExamples)).toEqual([
      'ETCD_NO_SPACE',
      'NO_QUORUM',
      'QUORUM_AT_RISK',
      'TARGET_NOT_FOUND',
    ]);
    expect(tally.stricterWhy.unexplained ?? 0).toBe(0);
    expect(Object.keys(tally.stricterWhy).sort()).toEqual([
      'a NOSPACE alarm stands',
      'a voter KCP counts healthy is unhealthy to us',
      'no quorum now',
      'target not in the member list',
    ]);
  });
});

// --- The cases issue 7 found by hand --------------------------------------------------------------

describe('the cases where the gate was looser than KCP', () => {
  const rows: { name: string; members: MemberSpec[]; target: number; reason: ReasonCode }[] = [
    {
      name: '3 healthy voters and a learner joining: removing a voter waits for the learner',
      members: [
        { i: 0, leader: 0 },
        { i: 1, leader: 0 },
        { i: 2, leader: 0 },
        { i: 3, learner: true, leader: 0 },
      ],
      target: 1,
      reason: 'MEMBER_NOT_READY',
    },
    {
      name: 'a learner target while the voters have no quorum',
      members: [
        { i: 0, leader: 'none' },
        { i: 1, paths: 'refused' },
        { i: 2, paths: 'refused' },
        { i: 3, learner: true, leader: 'none' },
      ],
      target: 3,
      reason: 'NO_QUORUM',
    },
    {
      name: 'a learner target beside a second learner',
      members: [
        { i: 0, leader: 0 },
        { i: 1, leader: 0 },
        { i: 2, leader: 0 },
        { i: 3, learner: true, leader: 0 },
        { i: 4, learner: true, leader: 0 },
      ],
      target: 3,
      reason: 'MEMBER_NOT_READY',
    },
    {
      name: 'a never-started learner beside a voter target',
      members: [
        { i: 0, leader: 0 },
        { i: 1, leader: 0 },
        { i: 2, leader: 0 },
        { i: 3, learner: true, unstarted: true },
      ],
      target: 2,
      reason: 'MEMBER_NOT_READY',
    },
  ];

  it.each(rows)('$name → $reason, as KCP refuses', (row) => {
    const gate = quorumGate(view(0, row.members), id(row.target));
    expect(gate).toMatchObject({ ok: false, reason: row.reason });
    const membership: Membership = {
      members: row.members.map((s) => ({
        i: s.i,
        learner: !!s.learner,
        unstarted: !!s.unstarted,
        paths: typeof s.paths === 'string' ? { direct: s.paths } : (s.paths ?? { direct: 'ok' }),
        errors: false,
        leader: s.leader ?? 'none',
        machine: true,
        // A member we cannot reach is one KCP cannot read either.
        uninspected: s.paths === 'refused',
      })),
      target: row.target,
    };
    expect(targetEtcdClusterHealthy(kcpControlPlane(membership), false, nameOf(row.target))).toBe(false);
  });
});
