// Leader hygiene's shared-cause check: half or more of the members breaching one level rule, slow
// to reach, or stalled is storage, a host or the network they share, and a move would not help.
// Counted out of every voting member: one whose figures are unknown breaches nothing known. Pure.
import { describeMs, hold, meanAnswerMs, type Facts, type HygieneDecision } from './hygiene-facts.ts';
import { degrading } from './hygiene-target.ts';
import { describeLatency, levelBreaches, signalWords, slowToReach } from './leader-degradation.ts';

export function sharedCause({ input, members, unknown, t, roundTripsSince: rttSince }: Facts): HygieneDecision | 'pass' {
  const { windowMs } = input.policy.hygiene;
  const total = members.length + unknown.length;
  for (const signal of ['walFsyncP99', 'backendCommitP99'] as const) {
    const breaching = members
      .map((m) => ({ m, b: levelBreaches(m.samples, t, windowMs).find((b) => b.signal === signal && degrading(b)) }))
      .filter((x) => x.b !== undefined);
    if (breaching.length * 2 < total) continue;
    const figures = breaching.map(({ m, b }) => `${m.name} ${describeLatency(b!.latest)}`).join(', ');
    const level = describeLatency((signal === 'walFsyncP99' ? t.fsyncP99Ms : t.commitP99Ms) / 1_000);
    return hold(
      'HYGIENE_SHARED_DEGRADATION',
      `${breaching.length} of ${total} members breach the ${signalWords[signal]} level of ${level} (${figures}): the cause is shared, so leadership is not moved; check the storage they share, their hosts (CPU, I/O from other processes) and the network between them.`,
      { signal, level: level, members: breaching.map(({ m, b }) => ({ member: m.id, latest: b!.latest, since: b!.since })) },
      true,
    );
  }
  // A network every member is slow to reach over: the leader's round trip rule would move for nothing.
  const far = slowToReach(members, rttSince, t);
  if (far.length * 2 >= total) {
    const figures = far.map((x) => `${members.find((m) => m.id === x.id)!.name} ${describeLatency(x.roundTrip)}`).join(', ');
    return hold(
      'HYGIENE_SHARED_DEGRADATION',
      `${far.length} of ${total} members are reached by their peers in more than the round trip level of ${describeLatency(t.peerRoundTripMs / 1_000)} (${figures}): the network is slow for all of them, so leadership is not moved; check the network they share.`,
      { signal: 'peerRoundTrip', level: t.peerRoundTripMs, members: far.map((x) => ({ member: x.id, roundTrip: x.roundTrip })) },
      true,
    );
  }
  // A process starved of CPU answers late on every member alike, where heartbeat failures show on the leader alone.
  const since = input.now - windowMs;
  const stalled = members.map((m) => ({ m, ms: meanAnswerMs(m, since) })).filter((x) => x.ms !== undefined && x.ms > t.stallAnswerMs);
  if (stalled.length * 2 >= total) {
    const figures = stalled.map(({ m, ms }) => `${m.name} ${describeMs(ms!)}`).join(', ');
    return hold(
      'HYGIENE_SHARED_DEGRADATION',
      `${stalled.length} of ${total} members answered their scrapes in more than the stall level of ${describeMs(t.stallAnswerMs)} on average over the window (${figures}): the cause is shared, so leadership is not moved; check their hosts (CPU starvation, other processes) and what else they share.`,
      { signal: 'stall', level: t.stallAnswerMs, members: stalled.map(({ m, ms }) => ({ member: m.id, meanAnswerMs: ms })) },
      true,
    );
  }
  return 'pass';
}
