// Shared by the duplicate-storm tests: what "one MemberRemove" means on a real etcd lab.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { EventEnvelope } from '../../../events/catalogue.ts';
import type { IncidentStore } from '../../../functions/ports/incident-store.ts';
import type { CallLog } from '../e2e/pipeline.ts';

/**
 * etcd 3.4 refuses any reconfiguration ("etcdserver: unhealthy cluster") until its members have
 * been connected for about 5 s: a lab that old takes the first MemberRemove.
 */
export const settle = (): Promise<void> => sleep(6_000);

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
