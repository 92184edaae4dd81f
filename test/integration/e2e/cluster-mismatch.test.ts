// Issue 7, observed case 3, on the pipeline: one cluster entry whose endpoints are one member of
// etcd cluster B and then cluster A's three. The incident must block with CLUSTER_MISMATCH and
// send no MoveLeader and no MemberRemove to either cluster.
import { afterEach, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { startPipeline, type Pipeline } from './pipeline.ts';

describe('a cluster entry whose endpoints are two etcd clusters', () => {
  const running: { a?: Lab; b?: Lab; pipeline?: Pipeline } = {};
  afterEach(async () => {
    const { a, b, pipeline } = running;
    delete running.a;
    delete running.b;
    delete running.pipeline;
    try {
      await pipeline?.close();
    } finally {
      try {
        await a?.down();
      } finally {
        await b?.down();
      }
    }
  });

  const memberIds = async (lab: Lab) => (await lab.memberList()).map((m) => m.id).sort();

  it('blocks with CLUSTER_MISMATCH naming the endpoints and ids, and removes nothing in either cluster', async () => {
    const a = (running.a = await startLab({ members: 3, namePrefix: 'a' }));
    const b = (running.b = await startLab({ members: 1, namePrefix: 'b' }));
    const idA = (await a.status('a1')).clusterId;
    const idB = (await b.status('b1')).clusterId;
    const beforeA = await memberIds(a);
    const beforeB = await memberIds(b);
    const endpoints = [...b.endpoints(), ...a.endpoints()];
    const pipeline = (running.pipeline = await startPipeline({ endpoints: () => endpoints }, { policy: { graceMs: 0 } }));

    const outcome = await pipeline.remediate('a1');

    expect(outcome.detailType).toBe('RemediationBlocked');
    const detail = outcome.detail as { reason: string; message: string; evidence: { clusterIds?: string[] } };
    expect(detail.reason).toBe('CLUSTER_MISMATCH');
    for (const endpoint of endpoints) expect(detail.message).toContain(endpoint);
    expect(detail.message).toContain(idA);
    expect(detail.message).toContain(idB);
    expect(detail.evidence.clusterIds?.sort()).toEqual([idA, idB].sort());
    expect(pipeline.calls.memberRemove).toEqual([]);
    expect(pipeline.calls.moveLeader).toEqual([]);
    expect(await memberIds(a)).toEqual(beforeA);
    expect(await memberIds(b)).toEqual(beforeB);
  });
});
