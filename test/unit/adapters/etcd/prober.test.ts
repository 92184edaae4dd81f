import { describe, expect, it, vi } from 'vitest';
import { directPaths } from '../../../../functions/adapters/etcd/path-resolvers.ts';
import { createProber } from '../../../../functions/adapters/etcd/prober.ts';
import { manualClock } from '../../../support/manual-clock.ts';
import type { EtcdFailure, MemberInfo, MemberStatus, PathName } from '../../../../functions/core/common/types.ts';
import { EtcdCallError, type EndpointTarget, type EtcdMemberClient, type EtcdTransport, type PathResolver } from '../../../../functions/ports/etcd.ts';

/** How a fake endpoint behaves: answer after a delay, fail after a delay, or say nothing until the deadline. */
type Behaviour = { answerAfterMs: number } | { failAfterMs: number; failure: EtcdFailure } | { silent: true };

interface Call {
  endpoint: string;
  path: PathName;
  method: 'status' | 'memberList';
  deadlineMs: number;
}

const member = (id: string, endpoint?: string): MemberInfo => ({
  id,
  name: endpoint ? `m-${id}` : '',
  clientUrls: endpoint ? [endpoint] : [],
  peerUrls: [`http://peer-${id}:2380`],
  isLearner: false,
});

const statusOf = (leaderId: string, clusterId = CLUSTER): MemberStatus => ({
  leaderId,
  raftTerm: 3,
  raftIndex: 10,
  raftAppliedIndex: 10,
  alarms: [],
  errors: [],
  version: '3.4.23',
  dbSize: 1,
  isLearner: false,
  clusterId,
});

/** The cluster_id every fake endpoint answers with, unless `otherClusters` names it. */
const CLUSTER = 'c1';

/** An endpoint of another etcd cluster: its id, and the members its list names. */
interface OtherCluster {
  clusterId: string;
  members: MemberInfo[];
}

const REFUSED: EtcdFailure = { kind: 'refused', grpcCode: 14, message: 'connect ECONNREFUSED' };

function fakeTransport(members: MemberInfo[], behaviours: Record<string, Behaviour>, otherClusters: Record<string, OtherCluster> = {}) {
  const calls: Call[] = [];
  const respond = <T>(call: Call, value: T): Promise<T> => {
    calls.push(call);
    const behaviour = behaviours[`${call.path} ${call.endpoint}`] ?? behaviours[call.endpoint] ?? { silent: true };
    return new Promise<T>((resolve, reject) => {
      if ('answerAfterMs' in behaviour) setTimeout(() => resolve(value), behaviour.answerAfterMs);
      else if ('failAfterMs' in behaviour) setTimeout(() => reject(new EtcdCallError(behaviour.failure)), behaviour.failAfterMs);
      // Silent endpoints honour the deadline they were given, as gRPC does.
      else setTimeout(() => reject(new EtcdCallError({ kind: 'timeout', grpcCode: 4, message: 'Deadline exceeded' })), call.deadlineMs);
    });
  };
  const transport: EtcdTransport = {
    client({ endpoint, path }: EndpointTarget): EtcdMemberClient {
      const unused = () => Promise.reject(new Error('not used by the prober'));
      return {
        endpoint,
        path,
        status: (deadlineMs) => respond({ endpoint, path, method: 'status', deadlineMs }, statusOf('a', otherClusters[endpoint]?.clusterId)),
        memberList: (deadlineMs) => respond({ endpoint, path, method: 'memberList', deadlineMs }, otherClusters[endpoint] ?? { clusterId: CLUSTER, members }),
        moveLeader: unused,
        memberRemove: unused,
        snapshot: unused,
      };
    },
    close: async () => undefined,
  };
  return { transport, calls };
}

/**
 * Runs the probe on fake timers and says how much (virtual) time it took to settle: what the
 * deadline bounds is the prober's own waiting, which a loaded machine's real clock would blur.
 */
async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
  try {
    const started = performance.now();
    let ms = Number.NaN;
    const settled = run().then((value) => {
      ms = performance.now() - started;
      return value;
    });
    await vi.runAllTimersAsync();
    return { value: await settled, ms };
  } finally {
    vi.useRealTimers();
  }
}

describe('prober', () => {
  const A = 'http://a:2379';
  const B = 'http://b:2379';
  const C = 'http://c:2379';

  it('reuses seed statuses and probes non-seed members with the time left', async () => {
    const { transport, calls } = fakeTransport([member('a', A), member('b', B), member('c', C)], {
      [A]: { answerAfterMs: 60 },
      [B]: { failAfterMs: 5, failure: REFUSED },
      [C]: { answerAfterMs: 5 },
    });
    const sample = await createProber(transport, directPaths).probe({ seeds: [A, `${B}/`], deadlineMs: 500 });

    expect(sample.listFailures).toEqual([]);
    expect(sample.members.map((m) => [m.member.id, m.paths.map((p) => p.reachability), m.status?.leaderId])).toEqual([
      ['a', ['ok'], 'a'],
      ['b', ['refused'], undefined],
      ['c', ['ok'], 'a'],
    ]);
    expect(sample.members[1]?.paths[0]?.failure).toEqual(REFUSED);
    // One status per endpoint: seeds were not asked twice, the trailing slash did not make a second seed.
    const statusCalls = calls.filter((c) => c.method === 'status');
    expect(statusCalls.map((c) => c.endpoint).sort()).toEqual([A, B, C]);
    const cCall = statusCalls.find((c) => c.endpoint === C);
    expect(cCall?.deadlineMs).toBeLessThanOrEqual(500 - 55);
    expect(cCall?.deadlineMs).toBeGreaterThan(0);
  });

  it('carries the cluster_id of every answer: each member status, each seed, and the list it used', async () => {
    const { transport } = fakeTransport([member('a', A), member('c', C)], {
      [A]: { answerAfterMs: 5 },
      [B]: { failAfterMs: 5, failure: REFUSED },
      [C]: { answerAfterMs: 20 },
    });
    const sample = await createProber(transport, directPaths).probe({ seeds: [A, B], deadlineMs: 500 });
    expect(sample.members.map((m) => m.status?.clusterId)).toEqual([CLUSTER, CLUSTER]);
    // B refused: a seed that did not answer says nothing about identity.
    expect(sample.seeds).toEqual([{ endpoint: A, clusterId: CLUSTER }]);
    expect(sample.listedBy).toEqual({ endpoint: A, clusterId: CLUSTER });
  });

  it('takes no member list from seeds of two clusters, whichever answers first, and says which seed is of which', async () => {
    const X = 'http://x:2379';
    const { transport } = fakeTransport(
      [member('a', A), member('c', C)],
      { [X]: { answerAfterMs: 1 }, [A]: { answerAfterMs: 30 }, [C]: { answerAfterMs: 30 } },
      { [X]: { clusterId: 'b2', members: [member('x', X)] } },
    );
    const { value: sample, ms } = await timed(() => createProber(transport, directPaths).probe({ seeds: [X, A, C], deadlineMs: 300 }));
    expect(ms).toBeLessThan(300 * 1.2);
    expect(sample.members).toEqual([]);
    expect(sample.listFailures).toEqual([]);
    expect(sample.listedBy).toBeUndefined();
    expect(sample.seeds).toEqual([
      { endpoint: X, clusterId: 'b2' },
      { endpoint: A, clusterId: CLUSTER },
      { endpoint: C, clusterId: CLUSTER },
    ]);
  });

  it('hears out a slow seed of another cluster within the deadline, though the first list came long before', async () => {
    const X = 'http://x:2379';
    const { transport } = fakeTransport(
      [member('a', A)],
      { [A]: { answerAfterMs: 1 }, [X]: { answerAfterMs: 120 } },
      { [X]: { clusterId: 'b2', members: [member('x', X)] } },
    );
    const sample = await createProber(transport, directPaths).probe({ seeds: [A, X], deadlineMs: 300 });
    expect(sample.members).toEqual([]);
    expect(sample.seeds.map((s) => s.clusterId)).toEqual([CLUSTER, 'b2']);
  });

  it('says an answer at the endpoint its client says it came through (the exec relay picks a pod), a failure at the one asked', async () => {
    const { transport } = fakeTransport([member('a', A), member('b', B)], { [A]: { answerAfterMs: 1 }, [B]: { failAfterMs: 1, failure: REFUSED } });
    const relaying: EtcdTransport = {
      ...transport,
      client: (target) => ({ ...transport.client(target), answeredThrough: () => `${target.endpoint} via elsewhere` }),
    };
    const sample = await createProber(relaying, directPaths).probe({ seeds: [A], deadlineMs: 200 });
    expect(sample.members.map((m) => m.paths.map((p) => [p.endpoint, p.reachability]))).toEqual([[[`${A} via elsewhere`, 'ok']], [[B, 'refused']]]);
    expect(sample.listedBy?.endpoint).toBe(`${A} via elsewhere`);
    expect(sample.seeds).toEqual([{ endpoint: `${A} via elsewhere`, clusterId: CLUSTER }]);
  });

  it('stamps each sample on the clock it is given, the one the grace window is measured on', async () => {
    const { transport } = fakeTransport([member('a', A)], { [A]: { answerAfterMs: 1 } });
    const clock = manualClock(Date.parse('2030-01-01T00:00:00Z'));
    const sample = await createProber(transport, directPaths, clock).probe({ seeds: [A], deadlineMs: 200 });
    expect(sample.at).toBe(Date.parse('2030-01-01T00:00:00Z'));
  });

  it('keeps a never-started member, with no paths and no status', async () => {
    const { transport } = fakeTransport([member('a', A), member('d')], { [A]: { answerAfterMs: 1 } });
    const sample = await createProber(transport, directPaths).probe({ seeds: [A], deadlineMs: 200 });
    expect(sample.members.find((m) => m.member.id === 'd')).toEqual({ member: member('d'), paths: [] });
    expect(sample.seeds).toEqual([{ endpoint: A, clusterId: CLUSTER }]);
  });

  it('bounds the whole probe by one deadline however many members are silent', async () => {
    const silentMembers = Array.from({ length: 6 }, (_, i) => member(`s${i}`, `http://s${i}:2379`));
    const { transport } = fakeTransport([member('a', A), ...silentMembers], {
      [A]: { answerAfterMs: 120 },
    });
    const seeds = [A, ...silentMembers.slice(0, 3).map((m) => m.clientUrls[0] ?? '')];
    const { value: sample, ms } = await timed(() => createProber(transport, directPaths).probe({ seeds, deadlineMs: 300 }));

    expect(ms).toBeLessThan(300 * 1.2);
    expect(sample.members).toHaveLength(7);
    for (const probe of sample.members.slice(1)) expect(probe.paths.map((p) => p.reachability)).toEqual(['timeout']);
  });

  it('reports per-seed list failures when no seed answers', async () => {
    const { transport } = fakeTransport([member('a', A)], {
      [A]: { failAfterMs: 5, failure: REFUSED },
    });
    const { value: sample, ms } = await timed(() => createProber(transport, directPaths).probe({ seeds: [A, B], deadlineMs: 150 }));
    expect(ms).toBeLessThan(150 * 1.2);
    expect(sample.members).toEqual([]);
    expect(sample.listFailures.map((p) => [p.endpoint, p.path, p.reachability])).toEqual([
      [A, 'direct', 'refused'],
      [B, 'direct', 'timeout'],
    ]);
  });

  it('probes every policy path in parallel and takes status from the first path, in policy order, that answered', async () => {
    const forwarded: PathResolver = {
      resolve: (m, path) => (path === 'port-forward' ? `http://127.0.0.1:1${m.id.length}00` : directPaths.resolve(m, path)),
    };
    const { transport, calls } = fakeTransport([member('a', A), member('bb', B)], {
      [A]: { answerAfterMs: 5 },
      [`direct ${B}`]: { silent: true },
      'port-forward http://127.0.0.1:1200': { answerAfterMs: 5 },
      'port-forward http://127.0.0.1:1100': { failAfterMs: 1, failure: REFUSED },
    });
    const sample = await createProber(transport, forwarded).probe({
      seeds: [A],
      deadlineMs: 150,
      paths: ['direct', 'port-forward', 'exec-relay'],
    });

    const bb = sample.members.find((m) => m.member.id === 'bb');
    expect(bb?.paths.map((p) => [p.path, p.reachability])).toEqual([
      ['direct', 'timeout'],
      ['port-forward', 'ok'],
    ]);
    expect(bb?.status?.leaderId).toBe('a');
    const a = sample.members.find((m) => m.member.id === 'a');
    expect(a?.paths.map((p) => [p.path, p.reachability])).toEqual([
      ['direct', 'ok'],
      ['port-forward', 'refused'],
    ]);
    expect(calls.some((c) => c.path === 'exec-relay')).toBe(false);
  });
});
