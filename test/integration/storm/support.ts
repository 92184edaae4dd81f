// Shared by the duplicate-storm tests: what "one MemberRemove" means on a real etcd lab.
import { expect } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import type { IncidentStore } from '../../../functions/ports/incident-store.ts';
import { WaitAborted, waitFor } from '../../../functions/lib/wait-for.ts';
import { gatewayAddLearner } from '../../../infra/lab/etcd-gateway.ts';
import type { Lab } from '../../../infra/lab/lab.ts';
import type { CallLog } from '../e2e/pipeline.ts';

/**
 * Resolves once every running voting member takes reconfiguration, so a storm's first MemberRemove
 * is not refused. etcd 3.4 refuses it ("etcdserver: unhealthy cluster") until a member has been
 * connected to every peer for 5 s (isConnectedFullySince). The question asked is a member add of
 * the member's own peer URL: the same rule answers it first, and once the rule holds etcd refuses
 * it as "Peer URLs already exists", so the membership never changes.
 */
/** Resolves with how many looks it took: 1 when every member took reconfiguration at once. */
export async function settle(lab: Lab, timeoutMs = 20_000): Promise<number> {
  let looks = 0;
  await waitFor(
    async () => {
      looks++;
      // One at a time: etcd takes one configuration change at a time, and a second stalls.
      for (const member of lab.members.filter((m) => !m.isLearner && lab.runState(m.name) === 'running')) {
        const answer = await gatewayAddLearner(member.directUrl, member.peerUrl, 2_000).then(
          () => 'added',
          (error: Error) => error.message,
        );
        if (answer === 'added') throw new WaitAborted(`${member.name} added a second member on its own peer URL ${member.peerUrl}`);
        if (!/Peer URLs already exists/.test(answer)) throw new Error(`${member.name}: ${answer}`);
      }
      return true;
    },
    { timeoutMs, intervalMs: 250, what: 'every member to take reconfiguration' },
  );
  return looks;
}

/**
 * Exactly one MemberRemove that etcd accepted, of the target. Any other sent (on a loaded machine
 * the lab may still be settling) is one etcd refused as "unhealthy cluster", as said in a retry of
 * the one incident: a backed-off retry of the same removal, never a second removal.
 */
export function expectOneRemoval(calls: CallLog, events: EventEnvelope[], memberId: string): void {
  expect(calls.removed).toEqual([memberId]);
  expect(new Set(calls.memberRemove)).toEqual(new Set([memberId]));
  const refused = events
    .filter((e) => e.detailType === 'RetryRequested' && e.detail.from === 'remediate')
    .reduce((n, e) => n + ((e.detail as { message: string }).message.match(/etcdserver: unhealthy cluster/g)?.length ?? 0), 0);
  expect(calls.memberRemove.length).toBe(1 + refused);
  // The accepted one was the last sent: nothing after it.
  expect(calls.removedAt).toEqual([calls.memberRemove.length - 1]);
}

/**
 * The incident's journal says one removal and one actuator call, and accounts for every report of
 * the storm: the one that opened it, the rest joined (or came late), none lost.
 */
export async function expectStormJournal(store: Pick<IncidentStore, 'journal'>, incidentId: string, storm: number): Promise<void> {
  const steps = (await store.journal(incidentId)).map((e) => e.step);
  const count = (step: string) => steps.filter((s) => s === step).length;
  expect(count('actuator-called')).toBe(1);
  expect(count('member-removed')).toBe(1);
  expect(count('incident-opened')).toBe(1);
  expect(count('incident-opened') + count('duplicate-joined') + count('late-duplicate')).toBe(storm);
}
