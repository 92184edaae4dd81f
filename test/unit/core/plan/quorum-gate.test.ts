import { describe, it, expect } from 'vitest';
import { quorumGate } from '../../../../functions/core/plan/quorum-gate.ts';
import type { ReasonCode } from '../../../../functions/core/common/decision.ts';
import { cluster, id, seeded, view, type MemberSpec } from '../fixtures.ts';

// Ways a non-target member can be unhealthy; the generated cases cycle through them.
const sickness: ((i: number) => MemberSpec)[] = [
  (i) => ({ i, paths: 'refused' }),
  (i) => ({ i, paths: { direct: 'timeout', 'port-forward': 'refused' } }),
  (i) => ({ i, leader: 0, alarms: ['CORRUPT'] }),
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
  if (c.target === 'voting-unreachable') specs[0] = { i: 0, paths: { direct: 'refused', 'exec-relay': 'timeout' } };
  const sickIndexes = specs.filter((s, idx) => idx < c.voting && idx >= c.voting - c.unhealthy).map((s) => s.i);
  return { v: view(1_000, specs), targetIndex, sickIndexes };
}

/** Independent statement of the rule: strict majorities, before (target counted healthy) and after. */
function expected(c: Case): ReasonCode {
  const healthyNow = c.voting - c.unhealthy; // the target counts as up now
  if (c.target === 'learner') {
    if (2 * healthyNow <= c.voting) return 'NO_QUORUM';
    return c.learners > 1 || unstartedSick(c) > 0 ? 'MEMBER_NOT_READY' : 'TARGET_IS_LEARNER';
  }
  if (c.voting === 1) return 'LAST_MEMBER';
  if (2 * healthyNow <= c.voting) return 'NO_QUORUM';
  const remaining = c.voting - 1;
  const healthyAfter = remaining - c.unhealthy;
  if (2 * healthyAfter <= remaining) return 'QUORUM_AT_RISK';
  // A learner or a never-started member other than the target: KCP waits for it, and so do we.
  if (c.learners > 0 || unstartedSick(c) > 0) return 'MEMBER_NOT_READY';
  return 'QUORUM_SAFE';
}

/** The sick voters that never started (sickness 4 in the cycle). */
const unstartedSick = (c: Case): number =>
  Array.from({ length: c.voting }, (_, i) => i).filter((i) => i >= c.voting - c.unhealthy && i % sickness.length === 4).length;

const okReasons: ReasonCode[] = ['TARGET_IS_LEARNER', 'QUORUM_SAFE'];

describe('quorumGate, generated', () => {
  it('covers every reason', () => {
    expect(new Set(cases.map(expected))).toEqual(
      new Set(['TARGET_IS_LEARNER', 'LAST_MEMBER', 'NO_QUORUM', 'QUORUM_AT_RISK', 'MEMBER_NOT_READY', 'QUORUM_SAFE']),
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
      says: /^Removing etcd-0 \(8e9e05c52164694d\) would leave 1 of 2 voting members healthy, below the quorum of 2: etcd-2 \(fd422379fda50e48\) is unreachable on every path \(direct http:\/\/127\.0\.0\.1:4021 refused\); blocked, bring etcd-2 back or remediate it first\.$/,
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
      says: /no quorum now.*etcd-1.*etcd-2.*blocked, no member can be removed, etcd-0 .* included, until quorum is back: restore either etcd-1 .* or etcd-2 .*, or, if neither can be restored, recover the cluster from a snapshot of etcd-0, the member that answers with the most recent data \(term \d+, applied index \d+\), restored on every member \(etcd disaster recovery: `etcd-remediator plan` prints each step\)\.$/,
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
      name: 'a learner beside a lone healthy voter',
      members: [{ i: 0 }, { i: 1, learner: true }],
      target: 1,
      reason: 'TARGET_IS_LEARNER',
      ok: true,
      says: /^Removing learner etcd-1 .* leaves the 1 voting member untouched, and 1 of 1 is healthy, meeting the quorum of 1\.$/,
    },
    {
      name: '5 members, one alarmed: still safe',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }, { i: 4, alarms: ['CORRUPT'] }],
      target: 0,
      reason: 'QUORUM_SAFE',
      ok: true,
      says: /3 of 4 .* quorum of 3: etcd-4 \(2a1b3c4d5e6f7081\) has alarm CORRUPT/,
    },
    {
      // The quota reached: every member raises NOSPACE. An alarm is not a lost member: four of
      // five answer and agree on a leader, so the quorum holds (the NOSPACE block is the plan's).
      name: '5 members at their quota (NOSPACE on every one), the target dead: quorum holds',
      members: [{ i: 0, paths: 'refused' }, ...[1, 2, 3, 4].map((i) => ({ i, alarms: ['NOSPACE'] }))],
      target: 0,
      reason: 'QUORUM_SAFE',
      ok: true,
      says: /4 of 4 voting members healthy/,
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
      name: 'a learner other than the target: wait for it, as KCP does',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3, learner: true }],
      target: 0,
      reason: 'MEMBER_NOT_READY',
      ok: false,
      says: /^Removing etcd-0 \(8e9e05c52164694d\) must wait while the membership changes: etcd-3 \(a8266ecf031671f3\) is a learner not yet promoted and answers on direct http:\/\/127\.0\.0\.1:4031 \(quorum would hold: 2 of 2 voting members healthy, meeting the quorum of 2\); blocked.*promote.*or remove it/,
    },
    {
      name: 'a never-started member other than the target',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }, { i: 4, unstarted: true }],
      target: 0,
      reason: 'MEMBER_NOT_READY',
      ok: false,
      says: /2a1b3c4d5e6f7081 was added but never started/,
    },
    {
      name: 'a second learner beside a learner target',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3, learner: true }, { i: 4, learner: true, paths: 'refused' }],
      target: 3,
      reason: 'MEMBER_NOT_READY',
      ok: false,
      says: /^Removing etcd-3 .* must wait .*: etcd-4 \(2a1b3c4d5e6f7081\) is a learner not yet promoted/,
    },
    {
      // KCP does not match a member without a name, so it waits for it as starting; so do we.
      name: 'a never-started target: it may still be starting',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3, unstarted: true }],
      target: 3,
      reason: 'MEMBER_NOT_READY',
      ok: false,
      says: /^a8266ecf031671f3 was added but never started and may still be starting; blocked.*etcdctl member remove a8266ecf031671f3/,
    },
    {
      name: 'a learner target while the voters have no quorum',
      members: [{ i: 0 }, { i: 1, paths: 'refused' }, { i: 2, paths: 'timeout' }, { i: 3, learner: true }],
      target: 3,
      reason: 'NO_QUORUM',
      ok: false,
      says: /no quorum now: 1 of 3 voting members are up.*etcd-1 .* is unreachable on every path \(direct .* refused\) and etcd-2 .* is unreachable on every path \(direct .* timed out\); blocked, no member can be removed, etcd-3 .* included/,
    },
    {
      // The view counts the unreachable leader as up, but only 1 of 3 voters is healthy.
      name: 'a learner target with 1 of 3 voters healthy and the leader seen only through others',
      members: [
        { i: 0, leader: 0, paths: 'refused' },
        { i: 1, leader: 0 },
        { i: 2, leader: 0, alarms: ['CORRUPT'] },
        { i: 3, learner: true, leader: 0 },
      ],
      target: 3,
      reason: 'QUORUM_AT_RISK',
      ok: false,
      says: /^Removing learner etcd-3 .* needs a quorum of the 3 voting members to commit, and only 1 of them is healthy, below the quorum of 2: etcd-0 .* is unreachable on every path \(direct http:\/\/127\.0\.0\.1:4001 refused\) and etcd-2 .* has alarm CORRUPT; blocked, bring etcd-0 and etcd-2 back first\.$/,
    },
    {
      name: 'an unreachable learner does not count for quorum, but is waited for',
      members: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3, learner: true, paths: 'refused' }],
      target: 0,
      reason: 'MEMBER_NOT_READY',
      ok: false,
      says: /quorum would hold: 2 of 2 voting members healthy/,
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

describe('one quorum rule for the view and the gate', () => {
  it('the gate says NO_QUORUM exactly when the view says quorum is lost, and never approves against it', () => {
    const random = seeded(20261130);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
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
    const cut = view(0, [
      { i: 0, leader: 0, paths: 'refused' },
      { i: 1, leader: 0 },
      { i: 2, leader: 0, paths: 'timeout' },
      { i: 3, leader: 0 },
    ]);
    expect(cut.quorum).toMatchObject({ voting: 4, healthyVoting: 2, votingUp: 3, size: 3, ok: true });
    // Once they no longer name it, nothing says it is up.
    const gone = view(0, [
      { i: 0, leader: 'none', paths: 'refused' },
      { i: 1, leader: 'none' },
      { i: 2, leader: 'none', paths: 'timeout' },
      { i: 3, leader: 'none' },
    ]);
    expect(gone.quorum).toMatchObject({ votingUp: 2, ok: false });
    expect(quorumGate(gone, id(0)).reason).toBe('NO_QUORUM');
  });
});

describe('two sick members of three: one message, never a circle', () => {
  // etcd-1 is fine; etcd-0 and etcd-2 are sick. Either may be the target, and both read the same.
  const shapes: { name: string; members: MemberSpec[]; reason: ReasonCode }[] = [
    {
      name: 'the leader unreachable (the others still name it) and a follower unreachable',
      members: [
        { i: 0, leader: 0, paths: 'refused' },
        { i: 1, leader: 0 },
        { i: 2, paths: 'timeout' },
      ],
      reason: 'QUORUM_AT_RISK',
    },
    {
      name: 'two followers unreachable',
      members: [
        { i: 0, paths: 'refused' },
        { i: 1, leader: 1 },
        { i: 2, paths: 'timeout' },
      ],
      reason: 'NO_QUORUM',
    },
    {
      name: 'two members alarmed',
      members: [
        { i: 0, leader: 1, alarms: ['CORRUPT'] },
        { i: 1, leader: 1 },
        { i: 2, leader: 1, alarms: ['CORRUPT'] },
      ],
      reason: 'NO_QUORUM',
    },
  ];

  it.each(shapes)('$name → $reason, the same words for either target', ({ members, reason }) => {
    const v = view(1, members);
    const [a, b] = [quorumGate(v, id(0)), quorumGate(v, id(2))];
    expect(a).toMatchObject({ ok: false, reason });
    expect(b).toMatchObject({ ok: false, reason });
    expect(a.message).toBe(b.message);
    // Why, naming both; what a person can do; and no "first" that points at the other one.
    expect(a.message).toMatch(/etcd-0 \(8e9e05c52164694d\) .*etcd-2 \(fd422379fda50e48\)/);
    expect(a.message).toMatch(/restore either etcd-0 \(8e9e05c52164694d\) or etcd-2 \(fd422379fda50e48\)/);
    expect(a.message).toMatch(
      /recover the cluster from a snapshot of etcd-1, the member that answers with the most recent data .*restored on every member \(etcd disaster recovery: `etcd-remediator plan` prints each step\)\.$/,
    );
    expect(a.message).not.toMatch(/first/);
    expect(a.message).not.toMatch(/safe(?!ly)/);
  });

  it('says plainly that neither can be removed safely when the view still holds quorum', () => {
    const v = view(1, shapes[0]!.members);
    expect(quorumGate(v, id(0)).message).toBe(
      'Neither etcd-0 (8e9e05c52164694d) nor etcd-2 (fd422379fda50e48) can be removed safely: etcd-0 (8e9e05c52164694d) is unreachable on every path (direct http://127.0.0.1:4001 refused) and etcd-2 (fd422379fda50e48) is unreachable on every path (direct http://127.0.0.1:4021 timed out), so removing either would leave 1 of 2 voting members healthy, below the quorum of 2; blocked, restore either etcd-0 (8e9e05c52164694d) or etcd-2 (fd422379fda50e48) and the other can then be removed, or, if neither can be restored, recover the cluster from a snapshot of etcd-1, the member that answers with the most recent data (term 2, applied index 100), restored on every member (etcd disaster recovery: `etcd-remediator plan` prints each step).',
    );
  });

  it('still points at the one sick member when removing it first would be safe', () => {
    const gate = quorumGate(view(1, [{ i: 0 }, { i: 1 }, { i: 2, paths: 'refused' }]), id(0));
    expect(gate.message).toMatch(/blocked, bring etcd-2 back or remediate it first\.$/);
  });
});

describe('no message claims a safety the view contradicts', () => {
  it('over random memberships, a message says "safe" only when the view holds quorum and the gate passes', () => {
    const random = seeded(7);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    for (let run = 0; run < 3_000; run++) {
      const n = 1 + Math.floor(random() * 6);
      const members: MemberSpec[] = Array.from({ length: n }, (_, i) => ({
        i,
        leader: pick([0, 1, 'none'] as const),
        paths: pick(['ok', 'ok', 'refused', 'timeout'] as const),
        ...(random() < 0.2 ? { learner: true } : {}),
        ...(random() < 0.05 ? { unstarted: true } : {}),
      }));
      const v = view(0, members);
      const gate = quorumGate(v, id(Math.floor(random() * n)));
      const label = JSON.stringify({ run, members });
      if (/quorum is safe|safe(?!ly)/.test(gate.message)) expect(gate.ok && v.quorum.ok, label).toBe(true);
      if (!v.quorum.ok) expect(gate.ok, label).toBe(false);
    }
  });
});
