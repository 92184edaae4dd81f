// The periodic learner check on real etcd, with no incident at all: a learner a join left unstarted
// is removed once past stuckLearnerAfterMs by a running runtime's check, a pause or a remediation's
// cluster lock holds it until lifted, and a learner promoted in time is never touched. Nothing of it
// counts as a remediation.
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import { createEtcdGuards } from '../../../functions/adapters/etcd/etcd-guard.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { gatewayPromote } from '../../../infra/lab/etcd-gateway.ts';
import { startLab } from '../../../infra/lab/lab.ts';
import { parseExposition, valueOf } from '../../support/prometheus-text.ts';
import { labPerTest, startPipeline, type Pipeline } from './pipeline.ts';

const policy = { stuckLearnerAfterMs: 1_000, learnerCheckEveryMs: 300 };

const learnerRemoved = (pipeline: Pipeline): EventEnvelope<'LearnerRemoved'>[] =>
  pipeline.events.filter((e): e is EventEnvelope<'LearnerRemoved'> => e.detailType === 'LearnerRemoved');

/** The learner's sighting, once the check has recorded it for longer than `ms`. */
const seenFor = (pipeline: Pipeline, id: string, ms: number) =>
  waitFor(
    async () => {
      const at = (await pipeline.runtime.store.learnerSightings('lab'))[id];
      return at !== undefined && Date.now() - at > ms ? at : undefined;
    },
    { timeoutMs: 8_000, intervalMs: 50, what: `learner ${id} recorded for longer than ${ms} ms` },
  );

describe.sequential('periodic learner check', () => {
  const t = labPerTest();

  it('removes a learner that never started once past stuckLearnerAfterMs, with no incident open, and counts as no remediation', async () => {
    const lab = (t.lab = await startLab({ members: 1 }));
    const pipeline = (t.pipeline = await startPipeline(lab, { policy, learnerChecks: true, metrics: true }));
    const stuck = await lab.addUnstartedLearner({ timeoutMs: 5_000 });

    const [removed] = await waitFor(async () => (learnerRemoved(pipeline).length > 0 ? learnerRemoved(pipeline) : undefined), {
      timeoutMs: 8_000,
      what: 'LearnerRemoved',
    });
    expect(removed!.detail).toMatchObject({
      clusterId: 'lab',
      reason: 'STUCK_LEARNER_REMOVED',
      learner: { memberId: stuck, name: '' },
      evidence: { started: false },
    });
    expect(removed!.detail.incidentId).toBeUndefined();
    expect(removed!.detail.message).toMatch(
      /was added and never started .+ past the 1 s the policy allows \(stuckLearnerAfterMs\), so it is removed, which costs no vote\.$/,
    );
    expect(Date.parse(removed!.detail.at) - Date.parse(removed!.detail.learnerSince)).toBeGreaterThanOrEqual(1_000);
    expect(pipeline.calls.removed).toEqual([stuck]);
    expect((await lab.memberList()).map((m) => m.id)).toEqual(lab.members.map((m) => m.id));

    const store = pipeline.runtime.store;
    expect(await store.listIncidents()).toEqual([]);
    // Neither the storm guard (openings) nor a slot nor the one-member-down rule (removal record) counts it.
    expect(await store.openedSince(0)).toEqual([]);
    expect(await store.removalSlots(Date.now())).toEqual([]);
    const guards = createEtcdGuards({ prefix: '/etcd-remediator', deadlineMs: 1_000 });
    try {
      expect(await guards.at([{ path: 'direct', endpoint: lab.endpoints()[0]! }]).removals()).toEqual([]);
    } finally {
      guards.close();
    }
    expect(await store.learnerSightings('lab')).toEqual({});
    // Counted once, as an incident's removal of a learner is; no remediation is.
    const scrape = parseExposition(await pipeline.runtime.metrics!.text());
    expect(valueOf(scrape, 'etcd_remediator_learner_removed_total')).toBe(1);
    expect(valueOf(scrape, 'etcd_remediator_remediation_completed_total')).toBe(0);
  });

  it('a pause holds it: the learner stays past its window, and is removed once resumed', async () => {
    const lab = (t.lab = await startLab({ members: 1 }));
    const pipeline = (t.pipeline = await startPipeline(lab, { policy, learnerChecks: true }));
    await pipeline.runtime.store.setPause('lab', { by: 'test', at: Date.now(), why: 'change window' });
    const stuck = await lab.addUnstartedLearner({ timeoutMs: 5_000 });

    // Checked past the window several times over, paused each time.
    await seenFor(pipeline, stuck, policy.stuckLearnerAfterMs + 3 * policy.learnerCheckEveryMs);
    expect((await lab.memberList()).map((m) => m.id)).toContain(stuck);
    expect(learnerRemoved(pipeline)).toEqual([]);

    await pipeline.runtime.store.setPause('lab', null);
    const [removed] = await waitFor(async () => (learnerRemoved(pipeline).length > 0 ? learnerRemoved(pipeline) : undefined), {
      timeoutMs: 5_000,
      what: 'LearnerRemoved after resume',
    });
    expect(removed!.detail.learner.memberId).toBe(stuck);
    expect((await lab.memberList()).map((m) => m.id)).not.toContain(stuck);
    expect(await pipeline.runtime.store.listIncidents()).toEqual([]);
  });

  it('a remediation holding the cluster lock leaves it to the next check; once released, the learner is removed', async () => {
    const lab = (t.lab = await startLab({ members: 1 }));
    const pipeline = (t.pipeline = await startPipeline(lab, { policy, learnerChecks: true }));
    const guards = createEtcdGuards({ prefix: '/etcd-remediator', deadlineMs: 1_000 });
    try {
      const guard = guards.at([{ path: 'direct', endpoint: lab.endpoints()[0]! }]);
      expect((await guard.acquire('incident:another:0001', 30_000)).held).toBe(true);
      const stuck = await lab.addUnstartedLearner({ timeoutMs: 5_000 });

      await seenFor(pipeline, stuck, policy.stuckLearnerAfterMs + 3 * policy.learnerCheckEveryMs);
      expect((await lab.memberList()).map((m) => m.id)).toContain(stuck);
      expect(learnerRemoved(pipeline)).toEqual([]);

      await guard.release('incident:another:0001');
      const [removed] = await waitFor(async () => (learnerRemoved(pipeline).length > 0 ? learnerRemoved(pipeline) : undefined), {
        timeoutMs: 5_000,
        what: 'LearnerRemoved once the lock is free',
      });
      expect(removed!.detail.learner.memberId).toBe(stuck);
      expect(await guard.acquire('incident:another:0002', 30_000)).toEqual({ held: true });
      await guard.release('incident:another:0002');
    } finally {
      guards.close();
    }
  });

  it('never removes a learner promoted in time', async () => {
    const lab = (t.lab = await startLab({ members: 1 }));
    // The window outlasts the join; the checks see the learner while it catches up.
    const pipeline = (t.pipeline = await startPipeline(lab, { policy: { stuckLearnerAfterMs: 8_000, learnerCheckEveryMs: 300 }, learnerChecks: true }));
    const joined = await lab.addLearner({ timeoutMs: 8_000 });
    await waitFor(async () => (await pipeline.runtime.store.learnerSightings('lab'))[joined.id], {
      timeoutMs: 3_000,
      intervalMs: 50,
      what: 'the check to see the started learner',
    });
    // Caught up, it is promoted as kubeadm join does (etcd refuses until then).
    await waitFor(
      async () => {
        try {
          await gatewayPromote(lab.members[0]!.directUrl, joined.id, 2_000);
          return true;
        } catch (error) {
          if (/not ready|unhealthy|timed out/i.test(String(error))) return undefined;
          throw error;
        }
      },
      { timeoutMs: 5_000, intervalMs: 100, what: `learner ${joined.id} to be promoted` },
    );

    // Promoted: it is no learner any more, and drops out of the record at the next check.
    await waitFor(async () => ((await pipeline.runtime.store.learnerSightings('lab'))[joined.id] === undefined ? true : undefined), {
      timeoutMs: 3_000,
      what: 'the promoted member to drop out of the sightings',
    });
    const after = await lab.memberList();
    expect(after.find((m) => m.id === joined.id)).toMatchObject({ isLearner: false });
    expect(learnerRemoved(pipeline)).toEqual([]);
    expect(pipeline.calls.memberRemove).toEqual([]);
  });
});
