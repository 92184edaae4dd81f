// An incident is bound to the etcd cluster it first reached, and a cluster name to the identity it
// first answered with: two labs under one cluster name, one state file, never act across them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { startPipeline, type Pipeline } from './pipeline.ts';

describe('cluster identity across runs of one state file', () => {
  const labs: Lab[] = [];
  const pipelines: Pipeline[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    for (const p of pipelines.splice(0)) await p.close().catch(() => undefined);
    for (const l of labs.splice(0)) await l.down();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an incident opened against lab A and resumed against lab B under the same name is blocked, and B keeps every member', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'identity-'));
    const statePath = path.join(dir, 'state.sqlite');
    const [a, b] = await Promise.all([startLab({ members: 3 }), startLab({ members: 3 })]);
    labs.push(a, b);
    // A's leader is cut: the incident waits out a long grace window, and the run is stopped meanwhile.
    const leaderA = await a.leader();
    await a.fault(leaderA.name, 'cut');
    const first = await startPipeline(a, { statePath, policy: { graceMs: 600_000 } });
    pipelines.push(first);
    const now = new Date().toISOString();
    await first.runtime.submit({ clusterId: 'lab', target: { memberName: leaderA.name }, reason: 'test', source: 'test', observedAt: now, at: now });
    const bound = await waitFor(async () => (await first.runtime.store.listIncidents())[0]?.etcdClusterId, {
      timeoutMs: 10_000,
      what: 'the incident to be bound',
    });
    await first.close();
    pipelines.splice(0);

    // Same state file, same cluster name, the other lab's endpoints: the resume must not act on B.
    const second = await startPipeline(b, { statePath, policy: { graceMs: 600_000 } });
    pipelines.push(second);
    const blocked = await waitFor(async () => second.events.find((e) => e.detailType === 'RemediationBlocked'), {
      timeoutMs: 20_000,
      what: 'the resumed incident to be refused',
    });

    expect(blocked.detail).toMatchObject({ reason: 'CLUSTER_MISMATCH' });
    // Its seeds still hold A's members, so the probe itself sees both clusters; either way A's id is named.
    expect((blocked.detail as { message: string }).message).toContain(bound);
    expect(second.calls.memberRemove).toEqual([]);
    expect(second.calls.moveLeader).toEqual([]);
    expect((await b.memberList()).map((m) => m.id).sort()).toEqual(b.members.map((m) => m.id).sort());
    // A new report under the same name, against B, is refused too: the name remembers A.
    const later = new Date().toISOString();
    await second.runtime.submit({ clusterId: 'lab', target: { memberName: b.members[0]!.name }, reason: 'test', source: 'test', observedAt: later, at: later });
    const refused = await waitFor(
      async () => second.events.filter((e) => e.detailType === 'RemediationBlocked' && e.detail.incidentId !== blocked.detail.incidentId)[0],
      { timeoutMs: 20_000, what: 'the new report to be refused' },
    );
    expect((refused.detail as { message: string }).message).toMatch(
      /^Cluster lab is etcd cluster [0-9a-f]+ \(remembered since .*\), but its endpoints now answer as/,
    );
    expect(second.calls.memberRemove).toEqual([]);
  }, 60_000);
});
