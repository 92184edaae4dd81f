// Leader hygiene's policy, one row per rule and per edge: a three-member cluster sampled once a
// minute, etcd-2 leading, every member healthy unless a row tweaks its samples.
import { describe, expect, it } from 'vitest';
import type { MemberSignals } from '../../../../functions/core/hygiene/hygiene-signals.ts';
import { judgeLeaderHygiene, type HygieneDecision, type HygieneInput, type HygieneMove } from '../../../../functions/core/hygiene/leader-hygiene.ts';
import { parsePolicy, type PolicyInput } from '../../../../functions/core/policy/policy.ts';

const MIN = 60_000;
const NOW = Date.parse('2026-12-04T12:00:00Z');
const COUNT = 16;
const IDS = ['etcd-1', 'etcd-2', 'etcd-3'] as const;
type Id = (typeof IDS)[number];

/** i counts samples from the oldest (0) to the newest (COUNT - 1); back is how many before the newest. */
type Tweak = (i: number, back: number) => Partial<MemberSignals>;

const healthy = (id: Id, i: number): MemberSignals => ({
  memberId: id,
  at: NOW - (COUNT - 1 - i) * MIN,
  intervalMs: MIN,
  isLeader: id === 'etcd-2',
  hasLeader: true,
  leaderId: 'etcd-2',
  walFsyncP99: 0.004,
  walFsyncMean: 0.002,
  backendCommitP99: 0.008,
  backendCommitMean: 0.004,
  heartbeatSendFailures: 0,
  slowApplies: 0,
  leaderChanges: 0,
  applyLag: 0,
  peerRoundTripP99: 0.002,
  alarms: [],
  raftTerm: 5,
  raftIndex: 10_000,
  raftAppliedIndex: 10_000,
  restarted: false,
});

/** From `from` samples back to the newest (back 0), the tweak applies. */
const lastSamples =
  (from: number, tweak: Partial<MemberSignals>): Tweak =>
  (_i, back) =>
    back < from ? tweak : {};

interface Row {
  tweaks?: Partial<Record<Id, Tweak>>;
  moves?: HygieneMove[];
  policy?: PolicyInput;
  /** What this check could not read, by member: the scrape's error. */
  failed?: Partial<Record<Id, string>>;
}

function judge({ tweaks = {}, moves = [], policy = {}, failed = {} }: Row = {}): HygieneDecision {
  const members: HygieneInput['members'] = IDS.map((id) => ({
    id,
    samples: Array.from({ length: COUNT }, (_, i) => ({ ...healthy(id, i), ...tweaks[id]?.(i, COUNT - 1 - i) })),
    ...(failed[id] === undefined ? {} : { scrapeFailed: failed[id] }),
  }));
  const parsed = parsePolicy({ ...policy, hygiene: { enabled: true, ...policy.hygiene } });
  return judgeLeaderHygiene({ members, moves, now: NOW, policy: parsed });
}

const slowFsync = (from: number, p99 = 0.512) => lastSamples(from, { walFsyncP99: p99, walFsyncMean: p99 / 2 });

describe('judgeLeaderHygiene: when it judges at all', () => {
  it.each([
    { row: 'hygiene off (the default)', input: { policy: { hygiene: { enabled: false } } }, reason: 'HYGIENE_DISABLED', says: /off/ },
    { row: 'a moving term', input: { tweaks: { 'etcd-3': lastSamples(1, { raftTerm: 6 }) } }, reason: 'HYGIENE_UNSTABLE', says: /terms 5, 6/ },
    {
      row: 'a leader change between the last two samples',
      input: { tweaks: { 'etcd-1': lastSamples(1, { isLeader: true }), 'etcd-2': lastSamples(1, { isLeader: false }) } },
      reason: 'HYGIENE_UNSTABLE',
      says: /etcd-2 then etcd-1 leading/,
    },
    {
      row: 'a Status naming another leader',
      input: { tweaks: { 'etcd-3': lastSamples(1, { leaderId: 'etcd-3' }) } },
      reason: 'HYGIENE_UNSTABLE',
      says: /etcd-3 names another leader \(or none\) than etcd-2/,
    },
    {
      row: 'a member without a leader',
      input: { tweaks: { 'etcd-3': lastSamples(1, { hasLeader: false }) } },
      reason: 'HYGIENE_UNSTABLE',
      says: /etcd-3 sees no leader/,
    },
    { row: 'an alarm', input: { tweaks: { 'etcd-1': lastSamples(1, { alarms: ['NOSPACE'] }) } }, reason: 'HYGIENE_ALARM', says: /etcd-1 NOSPACE/ },
    {
      row: 'an election 5 min ago',
      input: { tweaks: { 'etcd-1': (_i: number, back: number) => (back === 5 ? { leaderChanges: 1 } : {}) } },
      reason: 'HYGIENE_RECENT_ELECTIONS',
      says: /changed 5 min ago, within 15 min/,
    },
  ] satisfies { row: string; input: Row; reason: string; says: RegExp }[])('$row: not evaluated, $reason', ({ input, reason, says }) => {
    const decision = judge({ ...input, tweaks: { 'etcd-2': slowFsync(12), ...input.tweaks } });
    expect(decision).toMatchObject({ kind: 'not-evaluated', reason });
    expect(decision.message).toMatch(says);
  });

  it('samples that do not reach back recentElectionsMs: not judged yet, an election before them would go unseen', () => {
    const decision = judge({ tweaks: { 'etcd-2': slowFsync(12) }, policy: { hygiene: { recentElectionsMs: 20 * MIN } } });
    expect(decision).toMatchObject({ kind: 'not-evaluated', reason: 'HYGIENE_UNSTABLE' });
    expect(decision.message).toMatch(/cover 16 min, less than the 20 min/);
  });

  it('an election older than recentElectionsMs does not hold it', () => {
    expect(judge({ tweaks: { 'etcd-1': (_i, back) => (back === 15 ? { leaderChanges: 1 } : {}) } }).reason).toBe('HYGIENE_LEADER_HEALTHY');
  });
});

describe('judgeLeaderHygiene: is the leader degraded', () => {
  it('a healthy leader is left alone', () => {
    const decision = judge();
    expect(decision).toMatchObject({ kind: 'leave', reason: 'HYGIENE_LEADER_HEALTHY' });
    expect(decision.message).toMatch(/WAL fsync p99 4 ms/);
  });

  it('by WAL fsync p99 above 500 ms for the whole window: moved to the best follower, said with the figures', () => {
    const decision = judge({ tweaks: { 'etcd-2': slowFsync(10), 'etcd-3': lastSamples(COUNT, { walFsyncP99: 0.006 }) } });
    expect(decision).toMatchObject({ kind: 'move', from: 'etcd-2', to: 'etcd-1', reason: 'LEADER_DEGRADED' });
    expect(decision.message).toBe("move leadership from etcd-2 to etcd-1: etcd-2's WAL fsync p99 was 512 ms for 10 min while etcd-1's WAL fsync p99 was 4 ms");
    expect(decision.evidence).toMatchObject({
      leader: { member: 'etcd-2', walFsyncP99: 0.512 },
      target: { member: 'etcd-1', walFsyncP99: 0.004 },
      ranked: ['etcd-1', 'etcd-3'],
    });
  });

  it('by backend commit p99 above 250 ms', () => {
    const decision = judge({ tweaks: { 'etcd-2': lastSamples(10, { backendCommitP99: 0.3, backendCommitMean: 0.2 }) } });
    expect(decision).toMatchObject({ kind: 'move', from: 'etcd-2', reason: 'LEADER_DEGRADED' });
    expect(decision.message).toMatch(/backend commit p99 was 300 ms for 10 min while etcd-\d's backend commit p99 was 8 ms/);
  });

  it('by heartbeat send failures rising in 3 of the last 10 samples', () => {
    const decision = judge({ tweaks: { 'etcd-2': (i) => (i % 3 === 0 ? { heartbeatSendFailures: 2 } : {}) } });
    expect(decision).toMatchObject({ kind: 'move', from: 'etcd-2', reason: 'LEADER_DEGRADED' });
    expect(decision.message).toMatch(/heartbeat send failures were rising in \d of the last 10 samples for 10 min/);
  });

  it('heartbeat send failures that stopped in the newest sample: recovered, though the last 10 still count 9', () => {
    const decision = judge({ tweaks: { 'etcd-2': (_i, back) => (back >= 1 && back <= 9 ? { heartbeatSendFailures: 4 } : {}) } });
    expect(decision).toMatchObject({ kind: 'leave', reason: 'HYGIENE_RECOVERED' });
    expect(decision.message).toBe(
      "etcd-2's heartbeat send failures were rising in as many as 9 of the last 10 samples within the window, and its newest sample has none: left alone.",
    );
  });

  describe("(d) the leader slow to reach: the followers' round trip to it", () => {
    /** Each follower's round trips: to the leader, and to the other follower. */
    const trips = (toLeader: number, between: number, other: Id): Partial<MemberSignals> => ({
      peerRoundTripP99By: { 'etcd-2': toLeader, [other]: between },
      peerRoundTripP99: Math.max(toLeader, between),
    });
    const slowLeaderNet = (from: number, toLeader = 0.3, between = 0.0005, leaders = 0.0004): Partial<Record<Id, Tweak>> => ({
      'etcd-1': lastSamples(from, trips(toLeader, between, 'etcd-3')),
      'etcd-3': lastSamples(from, trips(toLeader, between * 2, 'etcd-1')),
      // The leader's own probes go out fine (unless a row says otherwise): only the way to it is slow.
      'etcd-2': () => ({ peerRoundTripP99By: { 'etcd-1': leaders, 'etcd-3': leaders }, peerRoundTripP99: leaders }),
    });

    it('above 150 ms and 4× their round trip to each other for the window: moved, said with the figure', () => {
      const decision = judge({ tweaks: slowLeaderNet(12) });
      expect(decision).toMatchObject({ kind: 'move', from: 'etcd-2', to: 'etcd-1', reason: 'LEADER_DEGRADED' });
      expect(decision.message).toMatch(
        /^move leadership from etcd-2 to etcd-1: etcd-2's followers' peer round trip p99 to it was 300 ms for 1[12] min while etcd-1's round trip to the others was 0\.5 ms$/,
      );
    });

    it('observed in one sample of three (etcd observes it once in 30 s): no news carries the last level, still moved', () => {
      const sparse = slowLeaderNet(12);
      const every3 =
        (tweak: Tweak): Tweak =>
        (i, back) =>
          i % 3 === 0 ? tweak(i, back) : { peerRoundTripP99By: undefined, peerRoundTripP99: undefined };
      const decision = judge({ tweaks: { ...sparse, 'etcd-1': every3(sparse['etcd-1']!), 'etcd-3': every3(sparse['etcd-3']!) } });
      expect(decision).toMatchObject({ kind: 'move', from: 'etcd-2' });
    });

    it("a window shorter than etcd's 30 s between round-trip observations: the latest one still counts, for the target's figure and the shared check", () => {
      const sparse = slowLeaderNet(12);
      // Observed a minute back and not since: outside a window of 1 min, within 30 s and a check of it.
      const once =
        (tweak: Tweak): Tweak =>
        (i, back) =>
          back === 1 || back >= 3 ? tweak(i, back) : { peerRoundTripP99By: undefined, peerRoundTripP99: undefined };
      const policy = { hygiene: { windowMs: MIN } };
      const decision = judge({ tweaks: { ...sparse, 'etcd-1': once(sparse['etcd-1']!), 'etcd-3': once(sparse['etcd-3']!) }, policy });
      expect(decision).toMatchObject({ kind: 'move', from: 'etcd-2', to: 'etcd-1' });
      expect(decision.message).toMatch(/while etcd-1's round trip to the others was 0\.5 ms$/);
      const everyone = slowLeaderNet(12, 0.8, 0.1, 0.2);
      const shared = judge({
        tweaks: { 'etcd-1': once(everyone['etcd-1']!), 'etcd-2': once(everyone['etcd-2']!), 'etcd-3': once(everyone['etcd-3']!) },
        policy,
      });
      expect(shared).toMatchObject({ kind: 'hold', reason: 'HYGIENE_SHARED_DEGRADATION', evidence: { signal: 'peerRoundTrip' } });
    });

    it('the followers not four times faster to each other: no breach, nothing moved', () => {
      expect(judge({ tweaks: slowLeaderNet(12, 0.3, 0.25) })).toMatchObject({ kind: 'leave', reason: 'HYGIENE_LEADER_HEALTHY' });
    });

    it('every member slow to reach, the leader most: a network they share, nothing moved, an alert', () => {
      const decision = judge({ tweaks: slowLeaderNet(12, 0.8, 0.1, 0.2) });
      expect(decision).toMatchObject({ kind: 'hold', alert: true, reason: 'HYGIENE_SHARED_DEGRADATION', evidence: { signal: 'peerRoundTrip' } });
      expect(decision.message).toMatch(
        /^3 of 3 members are reached by their peers in more than the round trip level of 150 ms \(etcd-1 200 ms, etcd-2 800 ms, etcd-3 150 ms\): the network is slow for all of them/,
      );
    });

    it('slow to reach for less than the window: watched', () => {
      expect(judge({ tweaks: slowLeaderNet(5) })).toMatchObject({ kind: 'leave', reason: 'HYGIENE_DEGRADING' });
    });

    it('a follower slow to the other follower is no target', () => {
      const tweaks = slowLeaderNet(12);
      const decision = judge({ tweaks: { ...tweaks, 'etcd-1': lastSamples(12, trips(0.3, 0.05, 'etcd-3')) } });
      expect(decision).toMatchObject({
        kind: 'move',
        to: 'etcd-3',
        evidence: { refused: [{ member: 'etcd-1', why: "has a peer round trip p99 of 50 ms, above the leader's 0.4 ms" }] },
      });
    });
  });

  it('a quiet spell after a slow fsync is no recovery: the breach stands on the last observation', () => {
    const decision = judge({
      tweaks: {
        'etcd-2': (_i, back) => (back >= 12 ? {} : back >= 4 ? { walFsyncP99: 0.6, walFsyncMean: 0.3 } : { walFsyncP99: undefined, walFsyncMean: undefined }),
      },
    });
    expect(decision).toMatchObject({ kind: 'move', from: 'etcd-2' });
    expect(decision.message).toMatch(/etcd-2's WAL fsync p99 was 600 ms for 12 min/);
  });

  it('heartbeat send failures in 2 of 10 samples are not a breach', () => {
    expect(judge({ tweaks: { 'etcd-2': (i) => (i % 5 === 0 ? { heartbeatSendFailures: 1 } : {}) } }).reason).toBe('HYGIENE_LEADER_HEALTHY');
  });

  it('by outlier: p99 16× the best follower’s and above 100 ms, the means agreeing', () => {
    const decision = judge({ tweaks: { 'etcd-2': lastSamples(COUNT, { walFsyncP99: 0.128, walFsyncMean: 0.06 }) } });
    expect(decision).toMatchObject({ kind: 'move', from: 'etcd-2', reason: 'LEADER_DEGRADED' });
    expect(decision.message).toMatch(/etcd-2's WAL fsync p99 was 32× the best follower's for /);
  });

  it('an outlier p99 whose mean disagrees (coarse buckets) moves nothing', () => {
    const decision = judge({ tweaks: { 'etcd-2': lastSamples(COUNT, { walFsyncP99: 0.128, walFsyncMean: 0.003 }) } });
    expect(decision).toMatchObject({ kind: 'leave', reason: 'HYGIENE_LEADER_HEALTHY' });
  });

  it('degraded for less than the window: watched, not moved', () => {
    const decision = judge({ tweaks: { 'etcd-2': slowFsync(5) } });
    expect(decision).toMatchObject({ kind: 'leave', reason: 'HYGIENE_DEGRADING' });
    expect(decision.message).toMatch(/for 5 min of the window of 10 min/);
  });

  it('recovered inside the window: left alone', () => {
    const decision = judge({ tweaks: { 'etcd-2': (_i, back) => (back >= 2 && back < 9 ? { walFsyncP99: 0.6, walFsyncMean: 0.3 } : {}) } });
    expect(decision).toMatchObject({ kind: 'leave', reason: 'HYGIENE_RECOVERED' });
    expect(decision.message).toMatch(/was as bad as 600 ms within the window and is 4 ms now/);
  });

  it('hysteresis: a dip below the enter level but above the exit level keeps the breach', () => {
    // Means close to the followers' throughout, so only the level rule can speak (no outlier).
    const dip: Tweak = (_i, back) => (back < 11 ? { walFsyncP99: back < 5 ? 0.3 : 0.6, walFsyncMean: 0.005 } : {});
    expect(judge({ tweaks: { 'etcd-2': dip } })).toMatchObject({ kind: 'move', from: 'etcd-2', reason: 'LEADER_DEGRADED' });
    // The same 300 ms never above the enter level is no breach (its mean too close to the followers' for an outlier).
    expect(judge({ tweaks: { 'etcd-2': lastSamples(11, { walFsyncP99: 0.3, walFsyncMean: 0.005 }) } }).reason).toBe('HYGIENE_LEADER_HEALTHY');
  });

  it('hysteresis: under the exit level for less than a window does not end the breach', () => {
    const flap: Tweak = (_i, back) => (back < 12 && back !== 4 ? { walFsyncP99: 0.6, walFsyncMean: 0.005 } : {});
    expect(judge({ tweaks: { 'etcd-2': flap } })).toMatchObject({ kind: 'move', from: 'etcd-2' });
  });
});

describe('judgeLeaderHygiene: a shared cause, the limits, the target', () => {
  const degraded = { 'etcd-2': slowFsync(12) };

  it('half the members breaching the same signal: no move, an alert naming the signal, members, figures and what to check', () => {
    const decision = judge({ tweaks: { ...degraded, 'etcd-1': slowFsync(12, 0.7) } });
    expect(decision).toMatchObject({ kind: 'hold', alert: true, reason: 'HYGIENE_SHARED_DEGRADATION', evidence: { signal: 'walFsyncP99' } });
    expect(decision.message).toMatch(/2 of 3 members breach the WAL fsync p99 level of 500 ms \(etcd-1 700 ms, etcd-2 512 ms\)/);
    expect(decision.message).toMatch(/storage.*hosts.*network/);
  });

  it('3 moves in 24 h: no more, a person is asked to look', () => {
    const moves = [23, 12, 1].map((h) => ({ at: NOW - h * 3_600_000, from: 'etcd-3', to: 'etcd-2' }));
    const decision = judge({ tweaks: degraded, moves });
    expect(decision).toMatchObject({ kind: 'hold', alert: true, reason: 'HYGIENE_MOVE_LIMIT' });
    expect(decision.message).toMatch(/3 leader moves in 24 h, its limit of 3/);
  });

  it('a move within the cooldown: no second move', () => {
    const decision = judge({ tweaks: degraded, moves: [{ at: NOW - 20 * MIN, from: 'etcd-3', to: 'etcd-2' }] });
    expect(decision).toMatchObject({ kind: 'hold', alert: false, reason: 'HYGIENE_COOLDOWN' });
    expect(decision.message).toMatch(/moved 20 min ago, within the cooldown of 30 min/);
  });

  it('no caught-up follower: nothing moved, and why for each', () => {
    const behind = lastSamples(COUNT, { raftAppliedIndex: 8_000 });
    const decision = judge({ tweaks: { ...degraded, 'etcd-1': behind, 'etcd-3': behind } });
    expect(decision).toMatchObject({ kind: 'hold', alert: true, reason: 'HYGIENE_NO_TARGET' });
    expect(decision.message).toMatch(/etcd-1 has applied 2000 entries fewer than the leader has committed \(at most 1000\); etcd-3 has applied 2000/);
  });

  describe('stalls: how long each member takes to answer its scrapes', () => {
    const starvedLeader = { 'etcd-2': (i: number) => ({ heartbeatSendFailures: 3, answerMs: 180 + (i % 2) * 40 }) };
    const stalled =
      (ms: number): Tweak =>
      () => ({ answerMs: ms });

    it('the leader alone stalled, its heartbeats failing: moved to a prompt follower', () => {
      const decision = judge({ tweaks: { ...starvedLeader, 'etcd-1': stalled(4), 'etcd-3': stalled(3) } });
      expect(decision).toMatchObject({ kind: 'move', from: 'etcd-2', to: 'etcd-1' });
      expect(decision.message).toBe(
        "move leadership from etcd-2 to etcd-1: etcd-2's heartbeat send failures were rising in 10 of the last 10 samples for 14 min while etcd-1 answered its scrapes in 4 ms on average and etcd-2 in 200 ms",
      );
    });

    it('half or more of the members stalled: a shared cause, nothing moved, an alert with each figure', () => {
      const decision = judge({
        tweaks: { ...starvedLeader, 'etcd-1': stalled(300), 'etcd-3': stalled(3) },
        policy: { hygiene: { thresholds: { stallAnswerMs: 150 } } },
      });
      expect(decision).toMatchObject({ kind: 'hold', alert: true, reason: 'HYGIENE_SHARED_DEGRADATION', evidence: { signal: 'stall', level: 150 } });
      expect(decision.message).toMatch(
        /^2 of 3 members answered their scrapes in more than the stall level of 150 ms on average over the window \(etcd-1 300 ms, etcd-2 200 ms\)/,
      );
    });

    it('a stalled follower is no target, even with the better disk', () => {
      const decision = judge({
        tweaks: { ...starvedLeader, 'etcd-1': () => ({ answerMs: 260, walFsyncP99: 0.001 }), 'etcd-3': stalled(3) },
        policy: { hygiene: { thresholds: { stallAnswerMs: 250 } } },
      });
      expect(decision).toMatchObject({
        kind: 'move',
        to: 'etcd-3',
        evidence: {
          refused: [
            { member: 'etcd-1', why: expect.stringMatching(/answered its scrapes in 260 ms on average in the window, above the stall level of 250 ms/) },
          ],
        },
      });
    });
  });

  it('a follower worse than the leader on one signal is refused: the other takes over', () => {
    const decision = judge({ tweaks: { ...degraded, 'etcd-1': lastSamples(COUNT, { walFsyncP99: 0.002, backendCommitP99: 0.04 }) } });
    expect(decision).toMatchObject({
      kind: 'move',
      to: 'etcd-3',
      evidence: { refused: [{ member: 'etcd-1', why: expect.stringMatching(/backend commit p99 of 40 ms, worse than the leader's 8 ms/) }] },
    });
  });

  it("a follower a little above the leader but under the docs' healthy level is not worse: bucket noise refuses nobody", () => {
    // The leader breaches fsync; commit is held to "no worse", and 20 ms against its 8 ms is still healthy (< 25 ms).
    const decision = judge({
      tweaks: {
        ...degraded,
        'etcd-1': lastSamples(COUNT, { walFsyncP99: 0.002, backendCommitP99: 0.02 }),
        'etcd-3': lastSamples(COUNT, { walFsyncP99: 0.003, backendCommitP99: 0.02 }),
      },
    });
    expect(decision).toMatchObject({ kind: 'move', to: 'etcd-1', evidence: { refused: [] } });
  });

  it('on the latency the leader breaches a target must be strictly better; no worse on the other', () => {
    // etcd-2 an fsync outlier against etcd-3; etcd-1's p99 the same bucket as the leader's.
    const decision = judge({
      tweaks: { 'etcd-2': lastSamples(COUNT, { walFsyncP99: 0.128, walFsyncMean: 0.06 }), 'etcd-1': lastSamples(COUNT, { walFsyncP99: 0.128 }) },
    });
    expect(decision).toMatchObject({
      kind: 'move',
      to: 'etcd-3',
      evidence: { refused: [{ member: 'etcd-1', why: expect.stringMatching(/WAL fsync p99 of 128 ms, not better than the leader's 128 ms/) }] },
    });
  });

  it('the member that lost leadership within the return block is refused', () => {
    const decision = judge({ tweaks: degraded, moves: [{ at: NOW - 40 * MIN, from: 'etcd-1', to: 'etcd-2' }] });
    expect(decision).toMatchObject({
      kind: 'move',
      to: 'etcd-3',
      evidence: { refused: [{ member: 'etcd-1', why: expect.stringMatching(/led 40 min ago, within the return block of 120 min/) }] },
    });
  });

  it('dry run: the same decision, said as what it would do', () => {
    const decision = judge({ tweaks: degraded, policy: { hygiene: { dryRun: true } } });
    expect(decision).toMatchObject({ kind: 'would-move', from: 'etcd-2', to: 'etcd-1', reason: 'LEADER_DEGRADED' });
    expect(decision.message).toMatch(/^would move leadership from etcd-2 to etcd-1 \(dry run: nothing is moved\)/);
    expect(judge({ tweaks: degraded, policy: { dryRun: true } }).kind).toBe('would-move');
  });

  it('ranking between two good targets: the lower fsync p99, then its mean', () => {
    expect(judge({ tweaks: { ...degraded, 'etcd-3': lastSamples(COUNT, { walFsyncP99: 0.002 }) } })).toMatchObject({
      kind: 'move',
      to: 'etcd-3',
      evidence: { ranked: ['etcd-3', 'etcd-1'] },
    });
    expect(judge({ tweaks: { ...degraded, 'etcd-3': lastSamples(COUNT, { walFsyncMean: 0.001 }) } })).toMatchObject({ kind: 'move', to: 'etcd-3' });
  });
});

describe('judgeLeaderHygiene: unknown is never better', () => {
  const degraded = { 'etcd-2': slowFsync(12) };
  /** Every sample of a member an interval older: its newest is `minutes` old. */
  const olderBy =
    (minutes: number): Tweak =>
    (i) => ({ at: NOW - (COUNT - 1 - i) * MIN - minutes * MIN });
  const refused =
    'member etcd-3 (etcd-3): GET http://10.0.0.3:2379/metrics: line 12: etcd_disk_wal_fsync_duration_seconds_bucket{le="0.001"} counts NaN, not a finite number ≥ 0';

  it.each([
    {
      row: 'a NaN WAL fsync p99',
      tweak: lastSamples(1, { walFsyncP99: NaN }),
      says: /^has figures that are unknown: its WAL fsync p99 in its last sample is not a number \(NaN\)$/,
    },
    {
      row: 'an infinite backend commit p99',
      tweak: lastSamples(1, { backendCommitP99: Infinity }),
      says: /^has figures that are unknown: its backend commit p99 in its last sample is infinite$/,
    },
    {
      row: 'a NaN mean (a NaN observed: its _sum)',
      tweak: lastSamples(1, { walFsyncMean: NaN }),
      says: /its WAL fsync mean in its last sample is not a number \(NaN\)$/,
    },
    {
      row: 'a NaN earlier in the window',
      tweak: (_i: number, back: number) => (back === 3 ? { walFsyncP99: NaN } : {}),
      says: /its WAL fsync p99 in its sample of 3 min ago is not a number \(NaN\)$/,
    },
    {
      row: 'a NaN round trip to a peer',
      tweak: lastSamples(1, { peerRoundTripP99By: { 'etcd-1': NaN } }),
      says: /its peer round trip p99 to etcd-1 in its last sample is not a number \(NaN\)$/,
    },
    { row: 'a NaN slow-apply count', tweak: lastSamples(1, { slowApplies: NaN }), says: /its slow applies in its last sample is not a number \(NaN\)$/ },
    {
      row: 'no fsync observed in its last sample',
      tweak: lastSamples(1, { walFsyncP99: undefined }),
      says: /^has a WAL fsync p99 that is unknown: its last sample observed no WAL fsync$/,
    },
    {
      row: 'a last sample older than the window',
      tweak: olderBy(11),
      says: /^has figures that are unknown: its last sample is 11 min old, older than the window of 10 min$/,
    },
  ] satisfies { row: string; tweak: Tweak; says: RegExp }[])('a follower with $row is no target, said as unknown', ({ tweak, says }) => {
    // etcd-3 would rank first on every other figure: only its unknown one refuses it.
    const decision = judge({ tweaks: { ...degraded, 'etcd-3': (i, back) => ({ walFsyncP99: 0.001, walFsyncMean: 0.0005, ...tweak(i, back) }) } });
    expect(decision).toMatchObject({
      kind: 'move',
      from: 'etcd-2',
      to: 'etcd-1',
      evidence: { refused: [{ member: 'etcd-3', why: expect.stringMatching(says) }] },
    });
    expect(decision.message).not.toMatch(/NaN|Infinity/);
  });

  it('a follower this check could not read is no target, with the scrape error; the other takes over', () => {
    const decision = judge({ tweaks: { ...degraded, 'etcd-3': lastSamples(COUNT, { walFsyncP99: 0.001 }) }, failed: { 'etcd-3': refused } });
    expect(decision).toMatchObject({
      kind: 'move',
      to: 'etcd-1',
      evidence: { refused: [{ member: 'etcd-3', why: `has figures that are unknown: this check could not read it (${refused})` }] },
    });
  });

  it('no follower known: nothing moved, a hold that says why for each and names them', () => {
    const decision = judge({ tweaks: { ...degraded, 'etcd-1': lastSamples(1, { walFsyncP99: NaN }) }, failed: { 'etcd-3': refused } });
    expect(decision).toMatchObject({ kind: 'hold', alert: true, reason: 'HYGIENE_NO_TARGET', members: ['etcd-1', 'etcd-3'] });
    expect(decision.message).toBe(
      `etcd-2's WAL fsync p99 was 512 ms for 12 min, but no follower may take over: etcd-1 has figures that are unknown: its WAL fsync p99 in its last sample is not a number (NaN); etcd-3 has figures that are unknown: this check could not read it (${refused}).`,
    );
  });

  it('unknown followers count for no shared cause: one known follower as slow as the leader is 2 of 3, not half of the known', () => {
    const decision = judge({ tweaks: { ...degraded, 'etcd-1': slowFsync(12, 0.7) }, failed: { 'etcd-3': refused } });
    expect(decision).toMatchObject({ kind: 'hold', reason: 'HYGIENE_SHARED_DEGRADATION' });
    expect(decision.message).toMatch(/^2 of 3 members breach/);
    // Alone, the leader is 1 of 3: no shared cause, and no target either.
    expect(judge({ tweaks: degraded, failed: { 'etcd-1': 'x', 'etcd-3': refused } })).toMatchObject({ reason: 'HYGIENE_NO_TARGET' });
  });

  it.each([
    {
      row: 'a NaN WAL fsync p99, degraded before',
      tweaks: { 'etcd-2': (i: number, back: number) => (back === 0 ? { walFsyncP99: NaN } : slowFsync(12)(i, back)) },
      says: /its WAL fsync p99 in its last sample is not a number \(NaN\)/,
    },
    {
      row: 'a NaN WAL fsync p99, healthy before',
      tweaks: { 'etcd-2': lastSamples(1, { walFsyncP99: NaN }) },
      says: /its WAL fsync p99 in its last sample is not a number \(NaN\)/,
    },
    {
      row: 'a NaN in the window, degraded since',
      tweaks: { 'etcd-2': (i: number, back: number) => (back === 4 ? { walFsyncP99: NaN } : slowFsync(12)(i, back)) },
      says: /in its sample of 4 min ago is not a number/,
    },
    {
      row: 'an infinite heartbeat failure count',
      tweaks: { 'etcd-2': lastSamples(1, { heartbeatSendFailures: Infinity }) },
      says: /its heartbeat send failures in its last sample is infinite/,
    },
    { row: 'a last sample older than the window', tweaks: { 'etcd-2': olderBy(11) }, says: /its last sample is 11 min old, older than the window of 10 min/ },
  ] satisfies { row: string; tweaks: Partial<Record<Id, Tweak>>; says: RegExp }[])(
    'the leader with $row: not judged, neither a breach nor healthy',
    ({ tweaks, says }) => {
      const decision = judge({ tweaks });
      expect(decision).toMatchObject({ kind: 'not-evaluated', reason: 'HYGIENE_FIGURES_UNKNOWN', evidence: { leader: 'etcd-2' } });
      expect(decision.message).toMatch(/^etcd-2 leads, but its figures are unknown: /);
      expect(decision.message).toMatch(says);
      expect(decision.message).toMatch(/unknown is neither a breach nor health, so the leader is not judged and nothing is moved\.$/);
    },
  );

  it('the leader this check could not read: not judged, the scrape error said', () => {
    const decision = judge({ tweaks: degraded, failed: { 'etcd-2': 'member etcd-2 (etcd-2): GET http://10.0.0.2:2379/metrics: line 7: x' } });
    expect(decision).toMatchObject({ kind: 'not-evaluated', reason: 'HYGIENE_SCRAPE_FAILED', evidence: { failed: [{ member: 'etcd-2' }] } });
    expect(decision.message).toBe(
      'Could not read member etcd-2 (etcd-2): GET http://10.0.0.2:2379/metrics: line 7: x: etcd-2 leads and its figures are unknown, so the leader is not judged.',
    );
  });

  it.each([
    {
      row: 'a follower never read (or failing longer than samples are kept)',
      failing: 'etcd-3' as Id,
      decision: {
        kind: 'move',
        to: 'etcd-1',
        evidence: { refused: [{ member: 'etcd-3', why: `has figures that are unknown: this check could not read it (${refused})` }] },
      },
    },
    { row: 'the leader never read, as the others name it', failing: 'etcd-2' as Id, decision: { kind: 'not-evaluated', reason: 'HYGIENE_SCRAPE_FAILED' } },
  ])('$row, its scrape failing: unknown, never a figure', ({ failing, decision }) => {
    const members: HygieneInput['members'] = IDS.map((id) => ({
      id,
      samples:
        id === failing ? [] : Array.from({ length: COUNT }, (_, i) => ({ ...healthy(id, i), ...(id === 'etcd-2' ? slowFsync(12)(i, COUNT - 1 - i) : {}) })),
      ...(id === failing ? { scrapeFailed: refused } : {}),
    }));
    expect(judgeLeaderHygiene({ members, moves: [], now: NOW, policy: parsePolicy({ hygiene: { enabled: true } }) })).toMatchObject(decision);
  });

  it('no member sampled yet, one failing: not judged, the failure said', () => {
    const members: HygieneInput['members'] = IDS.map((id) => ({ id, samples: [], ...(id === 'etcd-3' ? { scrapeFailed: refused } : {}) }));
    const decision = judgeLeaderHygiene({ members, moves: [], now: NOW, policy: parsePolicy({ hygiene: { enabled: true } }) });
    expect(decision).toMatchObject({ kind: 'not-evaluated', reason: 'HYGIENE_SCRAPE_FAILED' });
    expect(decision.message).toBe(`Could not read ${refused}: the leader is not judged on part of the cluster.`);
  });

  it('a healthy leader with a follower unknown: judged healthy, the follower named, not read as fine', () => {
    const decision = judge({ failed: { 'etcd-3': refused } });
    expect(decision).toMatchObject({ kind: 'leave', reason: 'HYGIENE_LEADER_HEALTHY', evidence: { unknown: [{ member: 'etcd-3' }] } });
    expect(decision.message).toMatch(/\(etcd-3's figures are unknown: this check could not read it \(member etcd-3/);
  });
});
