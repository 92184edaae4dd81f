// One member down at a time, for every remediator at once: separate state files, one runtime with
// reports for every member, and stale views all meet the lock and the removal record that live in
// the cluster's own etcd. No healthy 3-member cluster is ever shrunk to 1.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import type { TerminalEvent } from '../../../infra/runtime/runtime.ts';
import { labPerTest, startPipeline, type Pipeline } from './pipeline.ts';

const reasonOf = (e: TerminalEvent): string => (e.detail as { reason?: string }).reason ?? e.detailType;

/** Reports every name on the pipeline at once and waits for an outcome of each incident. */
async function reportAll(pipeline: Pipeline, names: string[]): Promise<TerminalEvent[]> {
  const now = new Date().toISOString();
  const outcomes = names.map(async (memberName) => {
    const incidentId = randomUUID();
    const ended = pipeline.runtime.waitForOutcome({ clusterId: 'lab', incidentId }, 90_000);
    await pipeline.runtime.submit({ incidentId, clusterId: 'lab', target: { memberName }, reason: 'test', source: 'test', observedAt: now, at: now });
    return ended;
  });
  return Promise.all(outcomes);
}

const ids = async (lab: Lab) => (await lab.memberList()).map((m) => m.id).sort();

describe.sequential('one member down at a time, across remediators', () => {
  const t = labPerTest();
  const second: { pipeline?: Pipeline } = {};

  it('two operators with separate state files, a follower each, on a healthy 3-member cluster: one removal, the other REPLACEMENT_PENDING', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const leader = await lab.leader();
    const [f1, f2] = lab.members.filter((m) => m.id !== leader.id);
    const a = (t.pipeline = await startPipeline(lab));
    const b = (second.pipeline = await startPipeline(lab));
    try {
      const [first, other] = await Promise.all([reportAll(a, [f1!.name]), reportAll(b, [f2!.name])]);
      const outcomes = [first[0]!, other[0]!];
      const removedBy = outcomes.filter((o) => o.detailType === 'RemediationCompleted');
      expect(removedBy, outcomes.map((o) => JSON.stringify(o.detail).slice(0, 600)).join('\n')).toHaveLength(1);
      const blocked = outcomes.find((o) => o.detailType !== 'RemediationCompleted')!;
      const removed = [...a.calls.removed, ...b.calls.removed];
      expect(removed).toHaveLength(1);
      const gone = lab.members.find((m) => m.id === removed[0])!;
      const said = (blocked.detail as { message: string }).message;
      // The record says it; or, when the removed member still answered with its old member list,
      // the quorum gate refuses on its own. Either way a reason is named and nothing else goes.
      expect(['REPLACEMENT_PENDING', 'QUORUM_AT_RISK'], said).toContain(reasonOf(blocked));
      if (reasonOf(blocked) === 'REPLACEMENT_PENDING') {
        expect(said).toMatch(new RegExp(`^${gone.name} \\(${gone.id}\\) was removed .* leaving 2 of the 3 voting members .*; blocked, .*--allow-shrink`));
      }
      expect(await ids(lab)).toHaveLength(2);
    } finally {
      await second.pipeline?.close();
    }
  });

  it('one runtime given reports for all three members at once: one removal, the cluster keeps 2', async () => {
    const lab = (t.lab = await startLab({ members: 3 }));
    const pipeline = (t.pipeline = await startPipeline(lab));

    const outcomes = await reportAll(
      pipeline,
      lab.members.map((m) => m.name),
    );

    expect(outcomes.filter((o) => o.detailType === 'RemediationCompleted')).toHaveLength(1);
    expect(pipeline.calls.removed).toHaveLength(1);
    // The others say why they stopped; none says it removed anything.
    for (const o of outcomes.filter((x) => x.detailType !== 'RemediationCompleted')) {
      expect(o.detailType).toBe('RemediationBlocked');
      expect(['REPLACEMENT_PENDING', 'NO_MOVE_CANDIDATE', 'QUORUM_AT_RISK']).toContain(reasonOf(o));
    }
    expect(await ids(lab)).toHaveLength(2);
  });

  it('4 members, one dead, two remediators on stale views at once: one removal, the other REPLACEMENT_PENDING', async () => {
    const lab = (t.lab = await startLab({ members: 4 }));
    const leader = await lab.leader();
    const [dead, healthy] = lab.members.filter((m) => m.id !== leader.id);
    await lab.kill(dead!.name);
    const a = (t.pipeline = await startPipeline(lab));
    const b = (second.pipeline = await startPipeline(lab));
    try {
      const [first, other] = await Promise.all([reportAll(a, [dead!.name]), reportAll(b, [healthy!.name])]);
      const outcomes = [first[0]!, other[0]!];
      expect(outcomes.filter((o) => o.detailType === 'RemediationCompleted')).toHaveLength(1);
      expect(outcomes.map(reasonOf)).toContain('REPLACEMENT_PENDING');
      expect([...a.calls.removed, ...b.calls.removed]).toHaveLength(1);
      expect(await ids(lab)).toHaveLength(3);
    } finally {
      await second.pipeline?.close();
    }
  });
});
