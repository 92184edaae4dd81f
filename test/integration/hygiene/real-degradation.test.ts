// Leader hygiene against a leader degraded for real: its etcd process starved of CPU (SIGSTOP and
// SIGCONT in 400/100 ms cycles) under a background writer, read through /metrics as the check
// reads any cluster. Moved once to the best follower after the window; a starvation every member
// shares moves nothing and says why; the signal flapping to the new leader moves nothing within the
// cooldown; a leader that recovers inside the window is left alone; a dry run only says it.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startBackgroundWriter } from '../../support/background-writer.ts';
import {
  eventsOf,
  hygienePolicy,
  judgementLog,
  hygieneRecord,
  STARVED,
  startHygieneWorld,
  stopHygieneWorld,
  untilEvent,
  untilJudged,
  type HygieneWorld,
} from './support.ts';

/** Stable and judged healthy: samples reach back past the no-election span and the leader breaches nothing. */
const settled = (world: HygieneWorld) => untilJudged(world, ['HYGIENE_LEADER_HEALTHY'], { timeoutMs: 30_000 });

let world: HygieneWorld | undefined;
afterEach(async () => {
  await stopHygieneWorld(world);
  world = undefined;
});

describe('leader hygiene on a leader starved of CPU, for real', () => {
  it('moves a degraded leader once, to a follower, after the window; the new leader starved too moves nothing within the cooldown', async () => {
    const w = (world = await startHygieneWorld(hygienePolicy()));
    await settled(w);
    const leader = await w.lab.leader();
    const term = (await w.lab.status(leader.name)).raftTerm;
    // The latency a client of the two healthy members sees: what the move can change.
    const measured = startBackgroundWriter(
      w.lab.members.filter((m) => m.name !== leader.name).map((m) => m.directUrl),
      { concurrency: 1 },
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const before = measured.span();

    const starvedAt = Date.now();
    measured.mark();
    const log = judgementLog(w);
    const starving = w.lab.starve(leader.name, STARVED);
    // Watched first: degrading for less than the window is not enough.
    const ended = await untilJudged(w, ['HYGIENE_DEGRADING'], { since: starvedAt })
      .then(() => untilEvent(w, 'HygieneMoveEnded'))
      .catch((error: unknown) => log.failWith(error))
      .finally(() => log.stop());
    const movedAt = Date.now();
    const during = measured.span();

    expect(ended.detail).toMatchObject({ outcome: 'moved', reason: 'HYGIENE_MOVED', from: leader.id });
    expect(ended.detail.to).not.toBe(leader.id);
    // What starvation breaches first: heartbeats sent late, or commits caught by a stop; either way said with the target's figure.
    expect(ended.detail.message).toMatch(
      new RegExp(
        `^Moved leadership from ${leader.name} to etcd\\d in \\d+ ms; etcd\\d leads in term ${term + 1}: ${leader.name}'s (heartbeat send failures were rising|backend commit p99 was|WAL fsync p99 was) .+ while etcd\\d.+\\.$`,
      ),
    );
    expect(ended.detail.newTerm).toBe(term + 1);
    // Not before the window: the degradation had to last 6 s of samples.
    expect(movedAt - starvedAt).toBeGreaterThanOrEqual(6_000);
    const newLeader = await w.lab.leader();
    expect(newLeader.id).toBe(ended.detail.to);
    expect(w.pipeline.calls.moveLeader).toEqual([ended.detail.to]);
    const degraded = eventsOf(w, 'LeaderDegraded');
    expect(degraded).toHaveLength(1);
    expect(degraded[0]!.detail).toMatchObject({ from: leader.id, to: ended.detail.to, term, dryRun: false });

    // The old leader, still starved, is a follower now: writes commit on the other two.
    // A transfer drops the proposals in flight (etcd answers them after its request timeout): measured from the first write after it.
    measured.mark();
    await waitFor(async () => (measured.span().writes > 0 ? true : undefined), { timeoutMs: 15_000, what: 'a write after the move' });
    const resumedMs = Date.now() - movedAt;
    measured.mark();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const after = measured.span();
    await measured.stop();
    await starving.end();

    // The signal flaps to the new leader: it is judged degraded again, and nothing moves within the cooldown.
    const flapAt = Date.now();
    const starvingNew = w.lab.starve(newLeader.name, STARVED);
    const held = await untilJudged(w, ['HYGIENE_COOLDOWN'], { since: flapAt, timeoutMs: 30_000 });
    await starvingNew.end();
    expect(held.message).toMatch(new RegExp(`^${newLeader.name} is degraded, but leadership moved .* ago, within the cooldown of 2 min`));
    expect(w.pipeline.calls.moveLeader).toHaveLength(1);
    expect(eventsOf(w, 'LeaderDegraded')).toHaveLength(1);

    console.log(
      `leader hygiene, real starvation: moved ${movedAt - starvedAt} ms after the degradation began (window 6 s, a check a second); ` +
        `write p50/p99 before ${before.p50Ms.toFixed(1)}/${before.p99Ms.toFixed(1)} ms (${before.writes} writes), ` +
        `degraded ${during.p50Ms.toFixed(1)}/${during.p99Ms.toFixed(1)} ms (${during.writes}), ` +
        `after the move (writes resumed ${resumedMs} ms after it) ${after.p50Ms.toFixed(1)}/${after.p99Ms.toFixed(1)} ms (${after.writes})`,
    );
    // The move is what helped: the cluster wrote faster with the starved member a follower.
    expect(after.p99Ms).toBeLessThan(during.p99Ms);
  }, 120_000);

  it('a starvation every member shares moves nothing, and says why once', async () => {
    const w = (world = await startHygieneWorld(hygienePolicy()));
    await settled(w);
    const since = Date.now();
    const log = judgementLog(w);
    // Each on its own phase, as processes starved by one host are.
    const starving = await Promise.all(
      w.lab.members.map(async (m, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 170));
        return w.lab.starve(m.name, STARVED);
      }),
    );
    try {
      const alert = await untilEvent(w, 'LeaderHygieneAlert');
      expect(alert.detail.reason).toBe('HYGIENE_SHARED_DEGRADATION');
      // Heartbeat failures show on the leader alone; how late each member answers shows the starvation
      // on all, and on a loaded host their commits caught by a stop may show it first.
      expect(alert.detail.message).toMatch(
        /^[23] of 3 members (answered their scrapes in more than the stall level of 60 ms on average over the window|breach the (backend commit|WAL fsync) p99 level of \d+ ms) \(etcd\d \d+ ms, etcd\d \d+ ms.*: the cause is shared, so leadership is not moved/,
      );
      // Held for as long as it lasts, said once.
      await untilJudged(w, ['HYGIENE_SHARED_DEGRADATION'], { since: Date.now() + 1 });
    } catch (error) {
      log.failWith(error);
    } finally {
      await Promise.all(starving.map((s) => s.end()));
      log.stop();
    }
    // Said once when it started; its end (a check may judge the recovery as the starvation ends) is the one other saying.
    expect(eventsOf(w, 'LeaderHygieneAlert').filter((e) => e.detail.phase === 'started')).toHaveLength(1);
    expect(eventsOf(w, 'LeaderDegraded')).toEqual([]);
    expect(w.pipeline.calls.moveLeader).toEqual([]);
    expect(Date.now() - since).toBeLessThan(60_000);
  }, 120_000);

  it('a leader that recovers inside the window is watched, then left alone', async () => {
    const w = (world = await startHygieneWorld(hygienePolicy()));
    await settled(w);
    const leader = await w.lab.leader();
    const since = Date.now();
    const log = judgementLog(w);
    const starving = w.lab.starve(leader.name, STARVED);
    await untilJudged(w, ['HYGIENE_DEGRADING'], { since });
    await starving.end();
    const recoveredAt = Date.now();
    await untilJudged(w, ['HYGIENE_RECOVERED'], { since: recoveredAt })
      .catch((error: unknown) => log.failWith(error))
      .finally(() => log.stop());
    // Past the window since it began, and then some checks: still nothing moved, and it ends healthy.
    await untilJudged(w, ['HYGIENE_LEADER_HEALTHY'], { since: since + 8_000, timeoutMs: 40_000 });
    expect(w.pipeline.calls.moveLeader).toEqual([]);
    expect(eventsOf(w, 'LeaderDegraded')).toEqual([]);
    expect((await w.lab.leader()).name).toBe(leader.name);
  }, 120_000);

  it('in a dry run says it would move, moves nothing, and the record keeps it against the cooldown', async () => {
    const w = (world = await startHygieneWorld(hygienePolicy({ dryRun: true })));
    await settled(w);
    const leader = await w.lab.leader();
    const log = judgementLog(w);
    const starving = w.lab.starve(leader.name, STARVED);
    try {
      const ended = await untilEvent(w, 'HygieneMoveEnded').catch((error: unknown) => log.failWith(error));
      expect(ended.detail).toMatchObject({ outcome: 'would-move', reason: 'HYGIENE_WOULD_MOVE', from: leader.id });
      expect(ended.detail.message).toMatch(new RegExp(`^Dry run: would move leadership from ${leader.name} to etcd\\d \\(dry run: nothing is moved\\)`));
      await waitFor(async () => ((await hygieneRecord(w))?.moves.at(-1)?.state === 'would-move' ? true : undefined), {
        timeoutMs: 5_000,
        what: 'the dry-run move recorded',
      });
    } finally {
      log.stop();
      await starving.end();
    }
    expect(w.pipeline.calls.moveLeader).toEqual([]);
    expect((await w.lab.leader()).name).toBe(leader.name);
  }, 120_000);
});
