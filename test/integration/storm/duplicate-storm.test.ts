// Issue 10 §3, duplicate storm: 100 identical MemberUnhealthy reports sent at once, and 100 that
// differ only in observedAt, on a real 3-member lab through the embedded runtime. Either way: one
// incident, one MemberRemove, one actuator call.
import { describe, expect, it } from 'vitest';
import type { Actuator } from '../../../functions/ports/actuator.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab } from '../../../infra/lab/lab.ts';
import { labPerTest, startPipeline } from '../e2e/pipeline.ts';
import { expectOneRemoval, expectStormJournal, settle } from './support.ts';

const STORM = 100;

/** The etcd-only actuator, counted. */
function countingActuator(): Actuator & { calls: string[] } {
  const calls: string[] = [];
  return {
    name: 'counting',
    calls,
    replace: async ({ incidentId, member }) => {
      calls.push(incidentId);
      return { action: 'none', detail: `counted ${member.name || member.id}` };
    },
  };
}

describe.sequential('duplicate storm on the embedded runtime', () => {
  const t = labPerTest();

  for (const variant of ['identical', 'observedAt differs'] as const) {
    it(`${STORM} ${variant} MemberUnhealthy at once: one incident, one MemberRemove, one actuator call`, async () => {
      const lab = (t.lab = await startLab({ members: 3 }));
      const leader = await lab.leader();
      const follower = lab.members.find((m) => m.id !== leader.id)!;
      const actuator = countingActuator();
      await settle(lab);
      const pipeline = (t.pipeline = await startPipeline(lab, { actuator }));
      const base = Date.now();
      const at = new Date(base).toISOString();
      const detail = (i: number) => ({
        clusterId: 'lab',
        target: { memberName: follower.name },
        reason: 'kubelet down',
        source: 'storm',
        observedAt: variant === 'identical' ? at : new Date(base - i * 1_000).toISOString(),
        at,
      });

      // All at once: every submit is started before any is awaited.
      const accepted = await Promise.all(Array.from({ length: STORM }, (_, i) => pipeline.runtime.submit(detail(i), 'storm')));
      expect(accepted).toHaveLength(STORM);
      await waitFor(async () => pipeline.events.find((e) => e.detailType === 'RemediationCompleted'), {
        timeoutMs: 60_000,
        what: 'the remediation to complete',
      });
      await pipeline.runtime.bus.drain({ timeoutMs: 15_000 });

      const incidents = await pipeline.runtime.store.listIncidents({ clusterId: 'lab' });
      expect(incidents.map((i) => i.state)).toEqual(['awaiting-replacement']);
      const [incident] = incidents;
      expectOneRemoval(pipeline.calls, pipeline.events, follower.id);
      expect(actuator.calls).toEqual([incident!.incidentId]);
      await expectStormJournal(pipeline.runtime.store, incident!.incidentId, STORM);
      expect(pipeline.events.filter((e) => e.detailType === 'RemediationCompleted')).toHaveLength(1);
      expect(pipeline.events.filter((e) => e.detailType === 'MemberUnhealthy')).toHaveLength(STORM);
      expect(await pipeline.runtime.store.listDeadLetters()).toEqual([]);
      await waitFor(async () => ((await lab.memberList()).length === 2 ? true : undefined), { timeoutMs: 5_000, what: 'two members left' });
    }, 90_000);
  }
});
