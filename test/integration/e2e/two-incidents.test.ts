// Two incidents in one cluster at once: two followers of a 5-member lab reported together.
// Removals go one at a time under the cluster lock, both incidents end, and the cluster keeps
// quorum the whole time.
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { requestJson } from '../../../infra/lab/http-json.ts';
import { startLab, type Lab, type LabMember } from '../../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../../infra/runtime/runtime.ts';
import { labPerTest, type Pipeline, startPipeline } from './pipeline.ts';

interface QuorumSample {
  at: number;
  ok: boolean;
  said: string;
}

/**
 * Samples, until stopped, whether the cluster serves a linearizable read (which needs its leader
 * and a quorum) through any of the given members, each asked on its real port.
 */
function watchQuorum(members: LabMember[]): { samples: QuorumSample[]; stop(): Promise<void> } {
  const samples: QuorumSample[] = [];
  let stopped = false;
  const read = (m: LabMember) =>
    requestJson<{ header?: unknown }>({
      baseUrl: m.directUrl,
      path: '/v3/kv/range',
      body: { key: Buffer.from('quorum-watch').toString('base64') },
      timeoutMs: 1_000,
    });
  const watching = waitFor(
    async () => {
      const answers = await Promise.allSettled(members.map(read));
      const ok = answers.some((a) => a.status === 'fulfilled');
      const said = answers.map((a, i) => `${members[i]!.name}: ${a.status === 'fulfilled' ? 'ok' : String(a.reason)}`).join('; ');
      samples.push({ at: Date.now(), ok, said });
      return stopped ? true : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 100, what: 'the quorum watch to be stopped' },
  );
  return {
    samples,
    stop: async () => {
      stopped = true;
      await watching;
    },
  };
}

/** Submits MemberUnhealthy for every name at once; resolves with each incident's final event, by target name. */
async function remediateTogether(pipeline: Pipeline, names: string[], timeoutMs: number): Promise<Map<string, TerminalEvent>> {
  const outcomes = new Map<string, TerminalEvent>();
  const unsubscribe = pipeline.runtime.bus.subscribe((e) => {
    if (e.detailType !== 'RemediationCompleted' && e.detailType !== 'RemediationBlocked' && e.detailType !== 'RemediationFailed') return;
    const target = e.detail.target as { name?: string; memberName?: string };
    outcomes.set(target.name ?? target.memberName ?? '?', e);
  });
  try {
    const now = new Date().toISOString();
    await Promise.all(
      names.map((memberName) =>
        pipeline.runtime.submit({ clusterId: 'lab', target: { memberName }, reason: 'test', source: 'test', observedAt: now, at: now }),
      ),
    );
    return await waitFor(async () => (names.every((n) => outcomes.has(n)) ? outcomes : undefined), {
      timeoutMs,
      what: `a final event for each of ${names.join(', ')}`,
    });
  } finally {
    unsubscribe();
  }
}

describe.sequential('two incidents in one cluster', () => {
  const t = labPerTest();

  const memberIds = async (l: Lab) => (await l.memberList()).map((m) => m.id).sort();

  it.each([
    ['dead (killed)', true],
    ['running (reported, still answering)', false],
  ] as const)(
    'shrinking allowed, two %s followers of 5 reported together: removed one at a time, both incidents end, quorum kept throughout',
    async (_, kill) => {
      const lab = (t.lab = await startLab({ members: 5 }));
      const leader = await lab.leader();
      const followers = lab.members.filter((m) => m.id !== leader.id);
      const [a, b] = [followers[0]!, followers[1]!];
      const survivors = lab.members.filter((m) => m.id !== a.id && m.id !== b.id);
      if (kill) {
        // Three of five up: exactly a quorum, so removing any healthy member would lose it.
        await lab.kill(a.name);
        await lab.kill(b.name);
      }
      // Two removals in a row leave the cluster at 3 of 5: only a policy that allows shrinking does that.
      const pipeline = (t.pipeline = await startPipeline(lab, { policy: { allowShrink: true } }));
      // At each final event: how many removals etcd had accepted, and which.
      const removedAtOutcome = new Map<string, string[]>();
      pipeline.runtime.bus.subscribe((e: EventEnvelope) => {
        if (e.detailType !== 'RemediationCompleted') return;
        removedAtOutcome.set(e.detail.target.name, [...pipeline.calls.removed]);
      });
      const quorum = watchQuorum(survivors);

      let outcomes: Map<string, TerminalEvent>;
      try {
        outcomes = await remediateTogether(pipeline, [a.name, b.name], 60_000);
      } finally {
        await quorum.stop();
      }

      // Both end, both remediated.
      for (const m of [a, b]) {
        const outcome = outcomes.get(m.name)!;
        expect(outcome.detailType, `${m.name}: ${JSON.stringify(outcome.detail).slice(0, 1500)}`).toBe('RemediationCompleted');
        if (outcome.detailType !== 'RemediationCompleted') continue;
        expect(outcome.detail.leaderMove).toBe('not-needed');
        expect(outcome.detail.newLeader.id).toBe(leader.id);
      }
      const incidents = await pipeline.runtime.store.listIncidents({ clusterId: 'lab' });
      expect(incidents.map((i) => i.state).sort()).toEqual(['awaiting-replacement', 'awaiting-replacement']);

      // One at a time: when the first incident completed (the member gone, a leader confirmed and the
      // actuator called, all under the lock), only its own member had been removed.
      expect(pipeline.calls.removed).toHaveLength(2);
      expect(new Set(pipeline.calls.removed)).toEqual(new Set([a.id, b.id]));
      const first = pipeline.calls.removed[0] === a.id ? a : b;
      const second = first === a ? b : a;
      expect(removedAtOutcome.get(first.name)).toEqual([first.id]);
      expect(removedAtOutcome.get(second.name)).toEqual([first.id, second.id]);
      expect(new Set(pipeline.calls.memberRemove)).toEqual(new Set([a.id, b.id]));
      expect(pipeline.calls.moveLeader).toEqual([]);
      // Both were approved at once; one found the lock held and waited. Which one is a race: the
      // first to hold the lock may be refused by etcd ("unhealthy cluster"), back off, and be removed second.
      const incidentOf = new Map(incidents.map((i) => [i.incidentId, i.memberName]));
      const locked = pipeline.events.flatMap((e) => (e.detailType === 'RetryRequested' && e.detail.reason === 'CLUSTER_LOCKED' ? [e.detail] : []));
      expect(locked.length).toBeGreaterThan(0);
      for (const d of locked) expect([a.name, b.name]).toContain(incidentOf.get(d.incidentId));
      for (const d of locked) expect(d.message).toContain('another remediation holds the lock');

      // The cluster never lost quorum: every sample of the watch read through the leader and a quorum.
      expect(quorum.samples.length).toBeGreaterThan(0);
      const lost = quorum.samples.filter((s) => !s.ok);
      expect(lost, lost.map((s) => s.said).join('\n')).toEqual([]);

      // etcd's own word: the three survivors are left, under the leader they had.
      expect(await memberIds(lab)).toEqual(survivors.map((m) => m.id).sort());
      expect((await lab.leader()).id).toBe(leader.id);
    },
  );
});
