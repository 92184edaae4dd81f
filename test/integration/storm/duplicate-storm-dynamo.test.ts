// Duplicate storm on the DynamoDB store (dynalite): the four functions' own handlers on a real
// 3-member lab, every incident, journal line, lock and dead letter in DynamoDB (dynamo-pipeline.ts).
// Four "containers" take the deliveries in turn, so the 100 reports race on DynamoDB's conditional
// writes, not on one process's memory.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent } from '../../../events/catalogue.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { startedAhead } from '../e2e/started-ahead.ts';
import { startDynamoPipeline, type DynamoPipeline } from './dynamo-pipeline.ts';
import { expectOneRemoval, expectStormJournal, settle } from './support.ts';

const STORM = 100;
const CONTAINERS = 4;

describe.sequential('duplicate storm on the DynamoDB store (dynalite)', () => {
  let dynamo: Dynalite;
  let lab: Lab | undefined;
  let pipeline: DynamoPipeline | undefined;
  // The second storm's lab is started during the first, so settle() finds its wait served (started-ahead.ts).
  const labs = startedAhead(
    2,
    () => startLab({ members: 3 }),
    (started) => started.down(),
  );
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterEach(async () => {
    try {
      await pipeline?.close();
    } finally {
      pipeline = undefined;
      await lab?.down();
      lab = undefined;
    }
  });
  afterAll(async () => {
    await dynamo?.close();
  });

  for (const variant of ['identical', 'observedAt differs'] as const) {
    it(`${STORM} ${variant} MemberUnhealthy at once, ${CONTAINERS} containers: one incident, one MemberRemove, one actuator call`, async () => {
      lab = await labs.take();
      const leader = await lab.waitForLeader();
      const follower = lab.members.find((m) => m.id !== leader.id)!;
      await settle(lab);
      const p = (pipeline = await startDynamoPipeline(lab, dynamo, { containers: CONTAINERS }));
      const base = Date.now();
      const at = new Date(base).toISOString();
      const reports = Array.from({ length: STORM }, (_, i) =>
        makeEvent('MemberUnhealthy', {
          clusterId: 'lab',
          attempt: 0,
          target: { memberName: follower.name },
          reason: 'kubelet down',
          source: 'storm',
          observedAt: variant === 'identical' ? at : new Date(base - i * 1_000).toISOString(),
          at,
        }),
      );
      // One publish of all 100: every delivery is queued before any handler runs.
      await p.bus.publish(...reports);
      await waitFor(async () => p.events.find((e) => e.detailType === 'RemediationCompleted'), { timeoutMs: 60_000, what: 'the remediation to complete' });
      await p.bus.drain({ timeoutMs: 15_000 });

      const incidents = await p.store.listIncidents({ clusterId: 'lab' });
      expect(incidents.map((i) => i.state)).toEqual(['awaiting-replacement']);
      const [incident] = incidents;
      expectOneRemoval(p.calls, p.events, follower.id);
      expect(p.actuatorCalls).toEqual([incident!.incidentId]);
      await expectStormJournal(p.store, incident!.incidentId, STORM);
      expect(p.events.filter((e) => e.detailType === 'RemediationCompleted')).toHaveLength(1);
      expect(p.failures.map((f) => `${f.functionName}: ${String(f.error)}`)).toEqual([]);
      expect(p.deadLetters).toEqual([]);
      expect(await p.store.listDeadLetters()).toEqual([]);
      await waitFor(async () => ((await lab!.memberList()).length === 2 ? true : undefined), { timeoutMs: 5_000, what: 'two members left' });
    }, 120_000);
  }
});
