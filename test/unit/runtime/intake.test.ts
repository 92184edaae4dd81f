// The edge of `run`: concurrent duplicates are told the one incident they all joined.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOT_AN_INCIDENT_ID } from '../../../functions/core/incident/incident-id.ts';
import { createIntake, type IntakeReply } from '../../../infra/cli/intake.ts';
import type { LocalRuntime } from '../../../infra/runtime/runtime.ts';
import { silentRuntime, waitFor } from './helpers.ts';

describe('run intake', () => {
  let runtime: LocalRuntime;
  let close: () => Promise<void>;

  beforeEach(async () => {
    ({ runtime, close } = await silentRuntime('c1'));
    await runtime.start();
  });
  afterEach(() => close());

  it('duplicates arriving together all get the id of the one incident that opens', async () => {
    const intake = createIntake(runtime, ['c1']);
    const line = JSON.stringify({ clusterId: 'c1', target: { memberName: 'etcd1' }, reason: 'r', source: 'stdin', observedAt: new Date().toISOString() });

    const replies = (await Promise.all([intake(line, 'stdin'), intake(line, 'stdin'), intake(line, 'stdin')])) as Extract<IntakeReply, { accepted: true }>[];

    expect(replies.every((r) => r.accepted)).toBe(true);
    const ids = new Set(replies.map((r) => r.incidentId));
    expect(ids.size).toBe(1);
    expect(replies.map((r) => r.joined)).toEqual([false, true, true]);
    await waitFor(async () => (await runtime.store.listIncidents()).length === 1, 'the incident to open');
    const [incident] = await runtime.store.listIncidents();
    expect(incident!.incidentId).toBe(replies[0]!.incidentId);
  });

  it("refuses, as a conflict with a dead letter, an incidentId that is closed or is another target's", async () => {
    const intake = createIntake(runtime, ['c1']);
    const open = async (name: string) =>
      (await runtime.store.openOrJoin({ clusterId: 'c1', targetKey: `memberName=${name}`, target: { memberName: name }, reason: 'r', now: Date.now() }))
        .incident;
    const closed = await open('etcd1');
    await runtime.store.closeIncident(closed.incidentId, { outcome: 'blocked', result: null, now: Date.now() });
    const other = await open('etcd2');
    const report = (incidentId: string, target: Record<string, string>) =>
      intake(JSON.stringify({ incidentId, clusterId: 'c1', target, reason: 'r', source: 'stdin', observedAt: new Date().toISOString() }), 'stdin');

    const late = await report(closed.incidentId, { memberName: 'etcd1' });
    expect(late).toMatchObject({ accepted: false, conflict: true, field: 'incidentId' });
    expect(late.accepted ? '' : late.error).toBe(
      `MemberUnhealthy conflicts: incidentId: incident ${closed.incidentId} is blocked already; report again without incidentId to open a new incident`,
    );
    const elsewhere = await report(other.incidentId, { memberName: 'etcd3' });
    expect(elsewhere).toMatchObject({ accepted: false, conflict: true, field: 'incidentId' });
    expect(elsewhere.accepted ? '' : elsewhere.error).toContain(`incident ${other.incidentId} is for c1/memberName=etcd2, not c1/memberName=etcd3`);

    const dead = await runtime.store.listDeadLetters();
    expect(dead.map((d) => d.error)).toEqual([late, elsewhere].map((r) => (r.accepted ? '' : r.error)));
    expect(JSON.parse(dead[0]!.payload)).toMatchObject({ incidentId: closed.incidentId });

    // The same incident by its own target, or by the member id it resolved to, joins it.
    expect(await report(other.incidentId, { memberName: 'etcd2' })).toEqual({ accepted: true, incidentId: other.incidentId, joined: true });
  });

  it('refuses an incidentId that is not one of ours, naming the field, with the report kept as a dead letter and nothing opened', async () => {
    const intake = createIntake(runtime, ['c1']);
    const line = JSON.stringify({
      incidentId: '../x',
      clusterId: 'c1',
      target: { memberName: 'etcd1' },
      reason: 'r',
      source: 'stdin',
      observedAt: new Date().toISOString(),
    });

    const reply = await intake(line, 'stdin');

    expect(reply).toMatchObject({ accepted: false, field: 'incidentId', error: `MemberUnhealthy is invalid: incidentId: ${NOT_AN_INCIDENT_ID}` });
    const dead = await runtime.store.listDeadLetters();
    expect(dead.map((d) => [d.id, d.error])).toEqual([
      [reply.accepted ? '' : reply.deadLetterId, `MemberUnhealthy is invalid: incidentId: ${NOT_AN_INCIDENT_ID}`],
    ]);
    expect(JSON.parse(dead[0]!.payload)).toMatchObject({ incidentId: '../x' });
    expect(await runtime.store.listIncidents()).toEqual([]);
  });
});
