// No removal without the lock and the removal record in etcd. A slow etcd (every member delayed)
// or a NOSPACE alarm makes the lock's writes fail; that is a retry or a block, never a fall back
// to a lock only one state file sees. Two remediators with separate state files, a follower each,
// never take a healthy 3-member cluster below 2. The delayed case also proves the slow network
// is said so (the probe's deadline doubles) and that a follower is still removed through it.
import { describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import { journalWords } from '../../../functions/core/incident/journal-words.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../../infra/runtime/runtime.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { labPerTest, startPipeline, type Pipeline } from './pipeline.ts';
import { startedAhead } from './started-ahead.ts';

const reasonOf = (e: TerminalEvent): string => (e.detail as { reason?: string }).reason ?? e.detailType;
const said = (e: TerminalEvent): string => JSON.stringify(e.detail).slice(0, 1200);
const memberCount = async (lab: Lab): Promise<number> => (await lab.memberList(5_000)).length;

/** Every journal line both pipelines wrote: none may say the lock fell back to a state store. */
async function journalsOf(...pipelines: Pipeline[]): Promise<string[]> {
  const lines: string[] = [];
  for (const p of pipelines) {
    for (const incident of await p.runtime.store.listIncidents()) {
      for (const entry of await p.runtime.store.journal(incident.incidentId)) lines.push(`${entry.step} ${journalWords(entry)}`);
    }
  }
  return lines;
}

// A 700 ms call deadline against a 245 ms delay each way: a call on an open connection still gets
// through (one 490 ms round trip), a first probe on new connections does not, so the network is
// said to be slow and the next probe's deadline doubles. The case as at the CLI's 2 s and a 700 ms
// delay, every figure scaled by 0.35, the ratios kept (a round trip is 0.7 of the deadline): each
// step is a few round trips, so the case is that much shorter.
const DELAY_MS = 245;
const slowPolicy = { callTimeoutMs: 700, maxAttempts: 40, incidentDeadlineMs: 150_000 };

describe.sequential('no lock fallback', () => {
  const t = labPerTest();
  const other: { pipeline?: Pipeline } = {};
  // Both labs boot from the start, side by side (started-ahead.ts): the NOSPACE case's is up by the
  // time the delayed case, which waits on round trips, is over.
  const delayedLab = startedAhead(
    1,
    () => startLab({ members: 3 }),
    (lab) => lab.down(),
    { beginNow: true },
  );
  // etcd3 alone has a 1 MiB quota: writing past it raises NOSPACE, and the whole cluster then refuses writes.
  const nospaceLab = startedAhead(
    1,
    () => startLab({ members: 3, memberArgs: { etcd3: ['--quota-backend-bytes', String(1024 * 1024)] } }),
    (lab) => lab.down(),
    { beginNow: true },
  );

  it(`every member delayed ${DELAY_MS} ms: two remediators with their own state files remove one follower and refuse the other; after healing, the record written under the delay refuses a third`, async () => {
    const lab = (t.lab = await delayedLab.take());
    // Started ahead, it may be electing on a loaded machine: the leader it agrees on.
    const leader = await lab.waitForLeader();
    const [f1, f2] = lab.members.filter((m) => m.id !== leader.id);
    for (const m of lab.members) await lab.fault(m.name, { delayMs: DELAY_MS });
    const a = (t.pipeline = await startPipeline(lab, { policy: slowPolicy }));
    const b = (other.pipeline = await startPipeline(lab, { policy: slowPolicy }));
    try {
      const outcomes = await Promise.all([a.remediate(f1!.name, 170_000), b.remediate(f2!.name, 170_000)]);

      // The network is said to be slow in those words and figures, and the next probe waits longer.
      const slow = [...a.events, ...b.events].flatMap((e) =>
        e.detailType === 'RetryRequested' && e.detail.reason === 'CLUSTER_UNREACHABLE' ? [e.detail.message] : [],
      );
      expect(slow.length).toBeGreaterThan(0);
      // The deadline as the probe measured it: about 700 ms, or later on a loaded machine.
      expect(slow[0]).toMatch(
        /^No member answered within the deadline of ((6[6-9]|[7-9]\d)\d ms|1(\.\d)? s): all \d+ endpoints timed out .*; the network may be slow: the next probe waits 1\.4 s; raise the call deadline \(--timeout, policy callTimeout\) if it stays so; we look again at /,
      );
      const removed = [...a.calls.removed, ...b.calls.removed];
      expect(removed, outcomes.map(said).join('\n')).toHaveLength(1);
      expect(outcomes.filter((o) => o.detailType === 'RemediationCompleted')).toHaveLength(1);
      const refused = outcomes.find((o) => o.detailType !== 'RemediationCompleted')!;
      expect(['REPLACEMENT_PENDING', 'QUORUM_AT_RISK'], said(refused)).toContain(reasonOf(refused));
      expect((await journalsOf(a, b)).filter((l) => /state store only/.test(l))).toEqual([]);
      for (const m of lab.members) await lab.fault(m.name, 'heal');
      expect(await memberCount(lab)).toBe(2);

      // A third remediator, on a healed network and a state file of its own, reports the other
      // healthy member: the record written under the delay says a replacement is owed.
      await b.close();
      delete other.pipeline;
      const c = (other.pipeline = await startPipeline(lab));
      const kept = lab.members.find((m) => m.id !== leader.id && m.id !== removed[0])!;
      const third = await c.remediate(kept.name, 60_000);
      expect(reasonOf(third), said(third)).toBe('REPLACEMENT_PENDING');
      expect(c.calls.memberRemove).toEqual([]);
      expect(await memberCount(lab)).toBe(2);
    } finally {
      await other.pipeline?.close();
      delete other.pipeline;
    }
  }, 240_000);

  it('a NOSPACE alarm: nothing is removed, and the block says why and what to do', async () => {
    const lab = (t.lab = await nospaceLab.take());
    const small = lab.member('etcd3');
    const client = new Etcd3({ hosts: lab.members.map((m) => m.directUrl) });
    try {
      const value = 'x'.repeat(64 * 1024);
      await waitFor(
        async () => {
          try {
            for (let i = 0; i < 4; i++) await client.put(`/fill/${Date.now()}-${i}`).value(value);
          } catch (error) {
            if (/database space exceeded/.test(String(error))) return true;
            throw error;
          }
          throw new Error('no NOSPACE yet');
        },
        { timeoutMs: 60_000, what: 'the NOSPACE alarm' },
      );
    } finally {
      client.close();
    }
    // The alarm left standing (maintenance.clearNoSpace off): what is proven here is that no lock
    // falls back while it stands; clearing it is nospace-maintenance.test.ts's.
    const standing = { policy: { maintenance: { clearNoSpace: false } } };
    const a = (t.pipeline = await startPipeline(lab, standing));
    const b = (other.pipeline = await startPipeline(lab, standing));
    try {
      const alarmed = await a.remediate(small.name, 60_000);
      const another = lab.members.find((m) => m.name !== small.name)!;
      const second = await b.remediate(another.name, 60_000);

      // The second target is judged with etcd3 alarmed: an alarm is no member lost, so the quorum
      // holds and the block is the alarm's, for either target.
      expect(reasonOf(alarmed), said(alarmed)).toBe('ETCD_NO_SPACE');
      expect(reasonOf(second), said(second)).toBe('ETCD_NO_SPACE');
      for (const outcome of [alarmed, second]) {
        const message = (outcome.detail as { message: string }).message;
        expect(message).toMatch(/NOSPACE/);
        expect(message).toMatch(/etcdctl alarm disarm/);
        expect(message).toMatch(/nothing was removed/);
        expect(message).not.toMatch(/disaster|quorum/);
      }
      expect([...a.calls.memberRemove, ...b.calls.memberRemove]).toEqual([]);
      expect(await memberCount(lab)).toBe(3);
    } finally {
      await other.pipeline?.close();
      delete other.pipeline;
    }
  }, 200_000);
});
