// Leader hygiene against a leader slow to reach, for real: its raft port behind the lab's peer
// proxy, every byte to and from it held 300 ms, so its appends reach the followers late and every
// write waits for them. The followers' own probes of it (etcd_network_peer_round_trip_time_seconds)
// show it; their round trip to each other does not. Moved once, to a follower, after the window.
// That metric is slow by etcd's design: the prober sends a probe every 4 s and smooths the round
// trips (SRTT, a weight of 1/8 on each), and the histogram observes that SRTT once in 30 s
// (rafthttp's statusMonitoringInterval). So a 600 ms round trip shows above 150 ms from the third
// probe on, in the first observation after that: 12 to 42 s in, then the window.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startBackgroundWriter } from '../../support/background-writer.ts';
import { eventsOf, hygienePolicy, judgementLog, startHygieneWorld, stopHygieneWorld, untilEvent, untilJudged, type HygieneWorld } from './support.ts';

let world: HygieneWorld | undefined;
afterEach(async () => {
  await stopHygieneWorld(world);
  world = undefined;
});

describe('leader hygiene on a leader whose peer traffic is slowed, for real', () => {
  it("moves it once, to a follower, on the followers' round trip to it; writes are fast again", async () => {
    const w = (world = await startHygieneWorld(hygienePolicy({ windowMs: 10_000 }), { peerProxies: true }));
    await untilJudged(w, ['HYGIENE_LEADER_HEALTHY'], { timeoutMs: 30_000 });
    const leader = await w.lab.leader();
    const term = (await w.lab.status(leader.name)).raftTerm;
    const measured = startBackgroundWriter(
      w.lab.members.filter((m) => m.name !== leader.name).map((m) => m.directUrl),
      { concurrency: 1 },
    );
    const log = judgementLog(w);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const before = measured.span();
      const slowedAt = Date.now();
      measured.mark();
      await w.lab.faultPeer(leader.name, { delayMs: 300 });
      const ended = await untilEvent(w, 'HygieneMoveEnded', 90_000).catch((error: unknown) => log.failWith(error));
      const movedAt = Date.now();
      const during = measured.span();
      expect(ended.detail).toMatchObject({ outcome: 'moved', from: leader.id, newTerm: term + 1 });
      expect(ended.detail.message).toMatch(
        new RegExp(
          `^Moved leadership from ${leader.name} to etcd\\d in \\d+ ms; etcd\\d leads in term ${term + 1}: ${leader.name}'s followers' peer round trip p99 to it was \\d+ ms for [\\d.]+ s while etcd\\d's round trip to the others was [\\d.]+ ms\\.$`,
        ),
      );
      expect(movedAt - slowedAt).toBeGreaterThanOrEqual(10_000);
      expect((await w.lab.leader()).id).toBe(ended.detail.to);
      expect(w.pipeline.calls.moveLeader).toEqual([ended.detail.to]);
      expect(eventsOf(w, 'LeaderDegraded')).toHaveLength(1);

      measured.mark();
      await waitFor(async () => (measured.span().writes > 0 ? true : undefined), { timeoutMs: 15_000, what: 'a write after the move' });
      measured.mark();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const after = measured.span();
      console.log(
        `leader hygiene, slowed peer traffic (300 ms each way): moved ${movedAt - slowedAt} ms after the delay began (window 10 s); ` +
          `write p50/p99 before ${before.p50Ms.toFixed(1)}/${before.p99Ms.toFixed(1)} ms, slowed ${during.p50Ms.toFixed(1)}/${during.p99Ms.toFixed(1)} ms, after the move ${after.p50Ms.toFixed(1)}/${after.p99Ms.toFixed(1)} ms`,
      );
      expect(during.p50Ms).toBeGreaterThan(250);
      expect(after.p99Ms).toBeLessThan(during.p50Ms);
    } finally {
      log.stop();
      await measured.stop();
      await w.lab.faultPeer(leader.name, 'heal');
    }
  }, 150_000);
});
