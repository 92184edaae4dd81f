import { mkdtemp, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEtcd3Transport, createProber, directPaths } from '../../../functions/adapters/etcd/index.ts';
import { BACKSTOP_GRACE_MS } from '../../../functions/adapters/etcd/deadline.ts';
import type { EtcdTransport } from '../../../functions/ports/etcd.ts';
import { failureOf, freePort, refusedEndpoint, startBlackhole, startForwarder, startSingleEtcd, type SingleEtcd } from './single-etcd.ts';

const DEADLINE_MS = 600;
/** Timer and scheduling slack on a busy two-core machine. */
const MARGIN_MS = 250;

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

/** etcdctl prints uint64 ids as JSON numbers, which JSON.parse would round: read them as text. */
function idsFromEtcdctlJson(json: string): string[] {
  const body = json.slice(json.indexOf('"members"'));
  return [...body.matchAll(/"ID":(\d+)/g)].map((m) => BigInt(m[1] ?? '').toString(16));
}

/** The header's cluster_id, read as text: a uint64 does not survive JSON.parse. */
function clusterIdFromEtcdctlJson(json: string): string {
  return BigInt(/"cluster_id":(\d+)/.exec(json)?.[1] ?? '0').toString(16);
}

describe('etcd3 transport against a real etcd', () => {
  let etcd: SingleEtcd;
  let blackhole: Awaited<ReturnType<typeof startBlackhole>>;
  let transport: EtcdTransport;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    etcd = await startSingleEtcd();
    blackhole = await startBlackhole();
  });
  afterAll(async () => {
    await blackhole?.stop();
    await etcd?.stop();
  });
  afterEach(async () => {
    await transport?.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  const direct = (endpoint: string) => {
    transport ??= createEtcd3Transport();
    return transport.client({ endpoint, path: 'direct' });
  };
  const fresh = () => {
    transport = createEtcd3Transport();
    return transport;
  };

  it('reports a single member as its own leader, with ids as etcdctl prints them in hex', async () => {
    fresh();
    const client = direct(etcd.endpoint);
    const { members, clusterId } = await client.memberList(DEADLINE_MS);
    const status = await client.status(DEADLINE_MS);
    const etcdctlSays = await etcd.etcdctl('member', 'list', '-w', 'json');
    const expected = idsFromEtcdctlJson(etcdctlSays);

    expect(members.map((m) => m.id)).toEqual(expected);
    // The cluster_id of both answers' headers, as etcdctl's own header has it.
    expect(clusterId).toBe(clusterIdFromEtcdctlJson(etcdctlSays));
    expect(clusterId).not.toBe('0');
    expect(status.clusterId).toBe(clusterId);
    expect(members[0]).toMatchObject({ name: etcd.name, clientUrls: [etcd.endpoint], isLearner: false });
    expect(status.leaderId).toBe(members[0]?.id);
    expect(status.raftTerm).toBeGreaterThanOrEqual(1);
    expect(status.errors).toEqual([]);
  });

  it('caches one client per endpoint and path', () => {
    const t = fresh();
    const a = t.client({ endpoint: etcd.endpoint, path: 'direct' });
    expect(t.client({ endpoint: etcd.endpoint, path: 'direct' })).toBe(a);
    expect(t.client({ endpoint: etcd.endpoint, path: 'exec-relay' })).not.toBe(a);
  });

  it('fails a refused endpoint as "refused" well within the deadline', async () => {
    fresh();
    const endpoint = await refusedEndpoint();
    const { value: failure, ms } = await timed(() => failureOf(direct(endpoint).status(DEADLINE_MS)));
    expect(failure.kind).toBe('refused');
    expect(failure.message).toContain('ECONNREFUSED');
    expect(ms).toBeLessThan(DEADLINE_MS);
  });

  it('fails a blackholed endpoint as "timeout" at the deadline, connection setup included', async () => {
    fresh();
    const { value: failure, ms } = await timed(() => failureOf(direct(blackhole.endpoint).memberList(DEADLINE_MS)));
    expect(failure.kind).toBe('timeout');
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
    expect(ms).toBeLessThan(DEADLINE_MS + BACKSTOP_GRACE_MS + MARGIN_MS);
  });

  it('answers on the first call once a refused endpoint heals: no stale reconnect backoff', async () => {
    fresh();
    const port = await freePort();
    const client = direct(`http://127.0.0.1:${port}`);
    for (let i = 0; i < 3; i++) expect((await failureOf(client.status(DEADLINE_MS))).kind).toBe('refused');
    const forwarder = await startForwarder(port, etcd.endpoint);
    cleanups.push(() => forwarder.stop());
    const status = await client.status(DEADLINE_MS);
    expect(status.leaderId).not.toBe('0');
  });

  it('normalizes a move to a member that does not exist', async () => {
    fresh();
    const failure = await failureOf(direct(etcd.endpoint).moveLeader('abcdef0123', DEADLINE_MS));
    expect(failure.kind).toBe('other');
    expect(failure.message).toBe('etcdserver: bad leader transferee');
    expect(failure.grpcCode).toBe(9);
  });

  it('says "member not found" when removing an unknown member', async () => {
    fresh();
    const failure = await failureOf(direct(etcd.endpoint).memberRemove('abcdef0123', DEADLINE_MS));
    expect(failure.message).toContain('member not found');
    expect(failure.grpcCode).toBe(5);
  });

  it('streams a snapshot that etcdctl can read back', async () => {
    fresh();
    await etcd.etcdctl('put', 'snapshot-probe', 'present');
    const dir = await mkdtemp(join(tmpdir(), 'etcd-snap-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'snap.db');
    await direct(etcd.endpoint).snapshot(createWriteStream(file), 5_000);
    const status = JSON.parse(await etcd.etcdctl('snapshot', 'status', file, '-w', 'json')) as { totalKey: number };
    expect(status.totalKey).toBeGreaterThanOrEqual(1);
  });

  it('rejects calls on a closed transport with a normalized failure', async () => {
    const t = fresh();
    const client = t.client({ endpoint: etcd.endpoint, path: 'direct' });
    await t.close();
    const failure = await failureOf(client.status(DEADLINE_MS));
    expect(failure.kind).toBe('other');
    expect(failure.message).toMatch(/closed/);
  });

  describe('prober', () => {
    it('probes [good, refused, blackholed] seeds within one deadline', async () => {
      const prober = createProber(fresh(), directPaths);
      const refused = await refusedEndpoint();
      const { value: sample, ms } = await timed(() => prober.probe({ seeds: [etcd.endpoint, refused, blackhole.endpoint], deadlineMs: DEADLINE_MS }));
      expect(ms).toBeLessThan(DEADLINE_MS + BACKSTOP_GRACE_MS + MARGIN_MS);
      expect(sample.listFailures).toEqual([]);
      expect(sample.members).toHaveLength(1);
      const [only] = sample.members;
      expect(only?.paths).toEqual([expect.objectContaining({ path: 'direct', endpoint: etcd.endpoint, reachability: 'ok' })]);
      expect(only?.status?.leaderId).toBe(only?.member.id);
      // Only the good seed answered: one cluster, and the list is its.
      const clusterId = only?.status?.clusterId;
      expect(sample.seeds).toEqual([{ endpoint: etcd.endpoint, clusterId }]);
      expect(sample.listedBy).toEqual({ endpoint: etcd.endpoint, clusterId });
    });

    it('says why per seed when no seed answers the member list', async () => {
      const prober = createProber(fresh(), directPaths);
      const refused = await refusedEndpoint();
      const { value: sample, ms } = await timed(() => prober.probe({ seeds: [refused, blackhole.endpoint], deadlineMs: DEADLINE_MS }));
      expect(ms).toBeLessThan(DEADLINE_MS + BACKSTOP_GRACE_MS + MARGIN_MS);
      expect(sample.members).toEqual([]);
      expect(sample.listFailures.map((p) => [p.endpoint, p.reachability])).toEqual([
        [refused, 'refused'],
        [blackhole.endpoint, 'timeout'],
      ]);
    });
  });
});
