import { describe, it, expect } from 'vitest';
import { quorumGate } from '../../../functions/core/quorum-gate.ts';
import type { ReasonCode } from '../../../functions/core/decision.ts';
import { cluster, id, view, type MemberSpec } from './fixtures.ts';

// Ways a non-target member can be unhealthy; the generated cases cycle through them.
const sickness: ((i: number) => MemberSpec)[] = [
  (i) => ({ i, paths: 'refused' }),
  (i) => ({ i, paths: { direct: 'timeout', 'port-forward': 'refused' } }),
  (i) => ({ i, leader: 0, alarms: ['NOSPACE'] }),
  (i) => ({ i, leader: 0, errors: ['raft: stopped'] }),
  (i) => ({ i, unstarted: true }),
];

interface Case {
  voting: number;
  learners: number;
  unhealthy: number;
  target: 'voting' | 'voting-unreachable' | 'learner';
}

const cases: Case[] = [];
for (let voting = 1; voting <= 7; voting++)
  for (let learners = 0; learners <= 2; learners++)
    for (let unhealthy = 0; unhealthy <= Math.min(3, voting - 1); unhealthy++)
      for (const target of ['voting', 'voting-unreachable', 'learner'] as const)
        if (target !== 'learner' || learners > 0) cases.push({ voting, learners, unhealthy, target });

/** The members for a case: the target first among its kind, the sick ones last among the voters. */
function build(c: Case) {
  const specs: MemberSpec[] = [];
  for (let i = 0; i < c.voting; i++) {
    const sick = i >= c.voting - c.unhealthy;
    specs.push(sick ? sickness[i % sickness.length]!(i) : { i, leader: 0 });
  }
  // Learners are unhealthy half the time: they must never count either way.
  for (let k = 0; k < c.learners; k++) {
    const i = c.voting + k;
    specs.push(k % 2 === 0 ? { i, learner: true, leader: 0 } : { i, learner: true, paths: 'refused' });
  }
  const targetIndex = c.target === 'learner' ? c.voting : 0;
  if (c.target === 'voting-unreachable') specs[0] = { i: 0, paths: { direct: 'refused', exec: 'timeout' } };
  const sickIndexes = specs.filter((s, idx) => idx < c.voting && idx >= c.voting - c.unhealthy).map((s) => s.i);
  return { v: view(1_000, specs), targetIndex, sickIndexes };
}

/** Independent statement of the rule: strict majorities, before (target counted healthy) and after. */
function expected(c: Case): ReasonCode {
  if (c.target === 'learner') return 'TARGET_IS_LEARNER';
  if (c.voting === 1) return 'LAST_MEMBER';
  const healthyNow = c.voting - c.unhealthy; // the target counts as healthy now
  if (2 * healthyNow <= c.voting) return 'NO_QUORUM';
  const remaining = c.voting - 1;
  const healthyAfter = remaining - c.unhealthy;
  if (2 * healthyAfter <= remaining) return 'QUORUM_AT_RISK';
  return 'QUORUM_SAFE';
}

const okReasons: ReasonCode[] = ['TARGET_IS_LEARNER', 'QUORUM_SAFE'];

describe('quorumGate, generated', () => {
  it('covers every reason', () => {
    expect(new Set(cases.map(expected))).toEqual(
      new Set(['TARGET_IS_LEARNER', 'LAST_MEMBER', 'NO_QUORUM', 'QUORUM_AT_RISK', 'QUORUM_SAFE']),
    );
  });

  it.each(cases)('$voting voting, $learners learners, $unhealthy unhealthy, target $target', (c) => {
    const { v, targetIndex, sickIndexes } = build(c);
    const gate = quorumGate(v, id(targetIndex));
    const reason = expected(c);
    expect(gate.reason).toBe(reason);
    expect(gate.ok).toBe(okReasons.includes(reason));
    expect(gate.figures.votingNow).toBe(c.voting);
    expect(gate.figures.votingAfter).toBe(c.target === 'learner' ? c.voting : c.voting - 1);
    expect(gate.figures.unhealthyAfter).toBe(c.unhealthy);
    expect(gate.figures.healthyAfter).toBe(gate.figures.votingAfter - c.unhealthy);
    expect(gate.unhealthy.sort()).toEqual(sickIndexes.map(id).sort());
    // One sentence naming the target and every unhealthy member.
    expect(gate.message).toContain(id(targetIndex));
    for (const i of sickIndexes) expect(gate.message).toContain(id(i));
    expect(gate.message.trim().endsWith('.')).toBe(true);
  });
});

describe('quorumGate, by hand', () => {
  const rows: { name: string; members: MemberSpec[]; target: number; reason: ReasonCode; ok: boolean; says: RegExp }[] = [
    {
      name: '3 healthy, remove a follower',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }],
      target: 1,
      reason: 'QUORUM_SAFE',
      ok: true,
      says: /leaves 2 of 2 voting members healthy, meeting the quorum of 2/,
    },
    {
      name: '3 members, one other unreachable',
      members: [{ i: 0 }, { i: 1 }, { i: 2, paths: 'refused' }],
      target: 0,
      reason: 'QUORUM_AT_RISK',
      ok: false,
      says: /^Removing etcd-0 \(8e9e05c52164694d\) would leave 1 of 2 voting members healthy, below the quorum of 2: etcd-2 \(fd422379fda50e48\) is unreachable on every path; blocked, bring etcd-2 back or remediate it first\.$/,
    },
    {
      name: 'the target unreachable, the others fine',
      members: [{ i: 0, paths: { direct: 'refused', 'port-forward': 'timeout' } }, { i: 1 }, { i: 2 }],
      target: 0,
      reason: 'QUORUM_SAFE',
      ok: true,
      says: /etcd-0/,
    },
    {
      // Only etcd-1 answers and names no leader: as far as anyone can tell, 1 of 3 is up.
      name: 'the target and one other unreachable',
      members: [{ i: 0, paths: 'refused' }, { i: 1 }, { i: 2, paths: 'timeout' }],
      target: 0,
      reason: 'NO_QUORUM',
      ok: false,
      says: /1 of 3 voting members are up.*etcd-2 \(fd422379fda50e48\) is unreachable on every path/,
    },
    {
      name: 'two of three others down: no quorum now',
      members: [{ i: 0 }, { i: 1, paths: 'refused' }, { i: 2, paths: 'timeout' }],
      target: 0,
      reason: 'NO_QUORUM',
      ok: false,
      says: /no quorum now.*etcd-1.*etcd-2/,
    },
    {
      name: 'the last voting member',
      members: [{ i: 0 }, { i: 1, learner: true }],
      target: 0,
      reason: 'LAST_MEMBER',
      ok: false,
      says: /etcd-0 \(8e9e05c52164694d\) is the last voting member/,
    },
    {
      name: 'a learner, even beside a lone voter',
      members: [{ i: 0 }, { i: 1, learner: true }],
      target: 1,
      reason: 'TARGET_IS_LEARNER',
      ok: true,
      says: /learner etcd-1/,
    },
    {
      name: '5 members, one alarmed: still safe',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }, { i: 4, alarms: ['NOSPACE'] }],
      target: 0,
      reason: 'QUORUM_SAFE',
      ok: true,
      says: /3 of 4 .* quorum of 3: etcd-4 \(2a1b3c4d5e6f7081\) has alarm NOSPACE/,
    },
    {
      name: '5 members, one never started and one in error',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3, unstarted: true }, { i: 4, errors: ['disk full'] }],
      target: 0,
      reason: 'QUORUM_AT_RISK',
      ok: false,
      says: /a8266ecf031671f3 was added but never started and etcd-4 \(2a1b3c4d5e6f7081\) reports errors: disk full; blocked, bring a8266ecf031671f3 and etcd-4 back or remediate them first/,
    },
    {
      name: 'an unreachable learner does not count',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3, learner: true, paths: 'refused' }],
      target: 0,
      reason: 'QUORUM_SAFE',
      ok: true,
      says: /2 of 2/,
    },
  ];

  it.each(rows)('$name → $reason', (row) => {
    const gate = quorumGate(view(1, row.members), id(row.target));
    expect(gate.reason).toBe(row.reason);
    expect(gate.ok).toBe(row.ok);
    expect(gate.message).toMatch(row.says);
  });

  it('does not find a member that is not there', () => {
    const gate = quorumGate(cluster(1, 3), 'deadbeef');
    expect(gate).toMatchObject({ ok: false, reason: 'TARGET_NOT_FOUND' });
    expect(gate.message).toContain('deadbeef');
  });
});

/** A small seeded generator, so a failure names a membership that can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('one quorum rule for the view and the gate', () => {
  it('the gate says NO_QUORUM exactly when the view says quorum is lost, and never approves against it', () => {
    const random = seeded(20261130);
    const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    for (let run = 0; run < 3_000; run++) {
      const n = 2 + Math.floor(random() * 6);
      const leader = pick([0, 1, 'none'] as const);
      const members: MemberSpec[] = Array.from({ length: n }, (_, i) => ({
        i,
        leader,
        paths: pick(['ok', 'ok', 'ok', 'refused', 'timeout'] as const),
        ...(random() < 0.1 ? { learner: true } : {}),
      }));
      const v = view(0, members);
      const voting = members.filter((m) => !m.learner);
      if (voting.length < 2) continue;
      const target = pick(voting).i;
      const gate = quorumGate(v, id(target));
      const label = JSON.stringify({ run, members, target });
      expect(gate.reason === 'NO_QUORUM', label).toBe(!v.quorum.ok);
      if (gate.ok) expect(v.quorum.ok, label).toBe(true);
    }
  });

  it('counts a leader we cannot reach as up while the members that answer agree it leads', () => {
    const cut = view(0, [{ i: 0, leader: 0, paths: 'refused' }, { i: 1, leader: 0 }, { i: 2, leader: 0, paths: 'timeout' }, { i: 3, leader: 0 }]);
    expect(cut.quorum).toMatchObject({ voting: 4, healthyVoting: 2, votingUp: 3, size: 3, ok: true });
    // Once they no longer name it, nothing says it is up.
    const gone = view(0, [{ i: 0, leader: 'none', paths: 'refused' }, { i: 1, leader: 'none' }, { i: 2, leader: 'none', paths: 'timeout' }, { i: 3, leader: 'none' }]);
    expect(gone.quorum).toMatchObject({ votingUp: 2, ok: false });
    expect(quorumGate(gone, id(0)).reason).toBe('NO_QUORUM');
  });
});
