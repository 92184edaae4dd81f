// Fragmentation cleared by maintenance, on real etcd, with writes running: a 3-member lab whose
// members each hold 32 MiB of keys and 160 MiB of free pages (written, deleted, the history
// compacted), maintenance turned on. The periodic check finds the free pages and defragments every
// member once, one at a time, the leader last and after leadership is moved off it: one election
// (the move's) and no other, the quorum held throughout (the quorum checker), no write refused but
// those in flight as leadership passed, and every database back to about its live data.
import { describe, expect, it } from 'vitest';
import { createMemberClient } from '../../../functions/adapters/etcd/member-client.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { startBackgroundWriter } from '../../support/background-writer.ts';
import { fragment } from '../../support/fragmented-lab.ts';
import { startQuorumChecker } from '../../support/quorum-checker.ts';
import { labPerTest, startPipeline } from './pipeline.ts';

const MiB = 1024 * 1024;

const statusesOf = async (lab: Lab) =>
  Promise.all(
    lab.members.map(async (m) => {
      const client = createMemberClient({ endpoint: m.directUrl, path: 'direct' });
      try {
        return { id: m.id, ...(await client.status(10_000)) };
      } finally {
        client.close();
      }
    }),
  );

describe('fragmentation cleared by maintenance', () => {
  const t = labPerTest();

  it('every member defragmented once, the leader last after a move, one election, the quorum held, writes accepted throughout', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.waitForLeader();
    await fragment(lab, { liveMib: 32, churnMib: 160 });
    const before = await statusesOf(lab);
    for (const s of before) expect(s.dbSize - (s.dbSizeInUse ?? s.dbSize), `${s.id}'s free pages`).toBeGreaterThan(64 * MiB);
    const term = Math.max(...before.map((s) => s.raftTerm));

    const checker = startQuorumChecker({ members: () => lab.members, electionTimeoutMs: 500 });
    const writer = startBackgroundWriter(lab.endpoints(), { paceMs: 10 });
    const policy = { maintenance: { enabled: true, checkEveryMs: 1_000, fragmentedShare: 0.3, fragmentedMinBytes: 64 * MiB, defragmentDeadlineMs: 120_000 } };
    const pipeline = (t.pipeline = await startPipeline(lab, { policy, maintenanceChecks: true }));
    let verdict;
    let written;
    try {
      const ended = await waitFor(async () => pipeline.events.find((e) => e.detailType === 'MaintenanceEnded'), {
        timeoutMs: 180_000,
        what: 'the maintenance to end',
      });
      if (ended.detailType !== 'MaintenanceEnded') throw new Error('not a MaintenanceEnded');
      expect(ended.detail.outcome, ended.detail.message).toBe('done');
      const keys = (ended.detail.evidence.steps as { key: string; outcome: string }[]).map((s) => `${s.key} ${s.outcome}`);
      // The followers in the member list's order (etcd's, not the lab's), then the leader after a move.
      const followers = lab.members.filter((m) => m.id !== leader.id).map((m) => `defragment:${m.id} done`);
      expect(keys.slice(0, 2).sort()).toEqual(followers.sort());
      expect(keys.slice(2)).toEqual([`move-leader:${leader.id} done`, `defragment:${leader.id} done`]);
    } finally {
      written = writer.span();
      await writer.stop();
      verdict = await checker.stop();
    }
    expect(verdict.quorum, verdict.summary).toBe('held');
    // The move fails the proposals in flight as leadership passes ("etcdserver: leader changed"),
    // and etcd3 retries no put: at most the writer's two workers' writes of that moment.
    expect(written.failed).toBeLessThanOrEqual(2);
    expect(written.writes).toBeGreaterThan(0);
    const after = await statusesOf(lab);
    // One election, the move's: no defragmentation cost the cluster a leader.
    expect(Math.max(...after.map((s) => s.raftTerm))).toBe(term + 1);
    for (const s of after) expect(s.dbSize, `${s.id}'s database`).toBeLessThan(64 * MiB);
    console.log(
      `fragmentation: ${before.map((s) => Math.round(s.dbSize / MiB)).join('/')} MiB → ${after.map((s) => Math.round(s.dbSize / MiB)).join('/')} MiB; writes during: ${written.writes}, p50 ${written.p50Ms.toFixed(1)} ms, p99 ${written.p99Ms.toFixed(1)} ms`,
    );
  }, 300_000);
});
