// The whole pipeline over mTLS: a 3-member etcd cluster that serves clients only over TLS and only
// to holders of a client certificate, each member behind a fault proxy (TLS passes through it, as
// through a port-forward). The seed case, the leader's path cut, is remediated end to end with the
// cluster entry carrying the client credentials.
import { afterEach, describe, expect, it } from 'vitest';
import { createEtcd3Transport } from '../../../functions/adapters/etcd/index.ts';
import { EtcdCallError, type TlsFiles } from '../../../functions/ports/etcd.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { expectRemovedWithoutMove, reasonsOf, startPipeline, type Pipeline } from './pipeline.ts';
import { CALL_MS, startTlsCluster, type TlsCluster } from './tls-cluster.ts';

describe('the pipeline over mTLS', () => {
  let cluster: TlsCluster | undefined;
  let pipeline: Pipeline | undefined;
  afterEach(async () => {
    const [p, c] = [pipeline, cluster];
    pipeline = undefined;
    cluster = undefined;
    try {
      await p?.close();
    } finally {
      await c?.down();
    }
  });

  it('seed case over mTLS: the cut leader is removed without a move once the grace window passes', async () => {
    const tlsCluster = (cluster = await startTlsCluster());
    const files: TlsFiles = tlsCluster.certs.files;
    expect(tlsCluster.endpoints().every((e) => e.startsWith('https://'))).toBe(true);
    // mTLS is really on: the cluster's CA without a client certificate is turned away.
    const anonymous = createEtcd3Transport({ tls: { ca: files.ca } });
    try {
      const refused = await anonymous
        .client({ endpoint: tlsCluster.members[0]!.clientUrl, path: 'direct' })
        .status(CALL_MS)
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(EtcdCallError);
      expect((refused as EtcdCallError).failure.kind).toBe('tls');
    } finally {
      await anonymous.close();
    }

    const leader = await tlsCluster.leader();
    await leader.proxy.setMode('cut');
    pipeline = await startPipeline(tlsCluster, { tls: files, policy: { graceMs: 3_000 } });

    const outcome = await pipeline.remediate(leader.name);

    // Inside the grace window the plan retried, naming the https path and how it failed: refused,
    // not a TLS failure, so the credentials worked everywhere else.
    expectRemovedWithoutMove(pipeline, outcome, leader, 'refused');
    if (outcome.detailType !== 'RemediationCompleted') return;
    expect(reasonsOf(pipeline.events, 'RetryRequested')).not.toContain('TLS_FAILED');
    expect(reasonsOf(pipeline.events, 'RemediationBlocked')).toEqual([]);
    expect(reasonsOf(pipeline.events, 'RemediationApproved')).toContain('LEADER_UNREACHABLE_PAST_GRACE');
    expect(pipeline.calls.moveLeader).toEqual([]);
    expect(new Set(pipeline.calls.memberRemove)).toEqual(new Set([leader.id]));
    expect(pipeline.calls.removed).toEqual([leader.id]);

    // etcd's own word, asked over mTLS: the two others are left and one of them leads.
    const survivors = tlsCluster.members.filter((m) => m.id !== leader.id);
    const { members: listed } = await tlsCluster.admin.client({ endpoint: survivors[0]!.directUrl, path: 'direct' }).memberList(CALL_MS);
    expect(listed.map((m) => m.id).sort()).toEqual(survivors.map((m) => m.id).sort());
    const standing = await waitFor(() => tlsCluster.leader([leader.name]), { timeoutMs: 10_000, what: 'a leader among the survivors' });
    expect(standing.id).toBe(outcome.detail.newLeader.id);
  });
});
