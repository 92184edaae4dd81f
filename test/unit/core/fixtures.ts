// Small cluster fixtures: describe members in a line each, get a ProbeSample or a ClusterView.
import {
  NO_LEADER,
  type EtcdFailure,
  type HostEvidence,
  type MemberId,
  type MemberProbe,
  type PathName,
  type PathProbe,
  type ProbeSample,
  type Reachability,
} from '../../../functions/core/common/types.ts';
import { buildClusterView, type ClusterView } from '../../../functions/core/view/view.ts';
import { parsePolicy, type Policy, type PolicyInput } from '../../../functions/core/policy/policy.ts';

/** Member ids in the shape etcdctl prints them. Index i is member etcd-i. */
export const ids = [
  '8e9e05c52164694d',
  '91bc3c398fb3c146',
  'fd422379fda50e48',
  'a8266ecf031671f3',
  '2a1b3c4d5e6f7081',
  'c0ffee0ddba11001',
  '5eed5eed5eed5eed',
  '7e57ab1e7e57ab1e',
  '1ea2ae2c0de00001',
  'b0b0b0b0b0b0b0b0',
] as const;

export const id = (i: number): MemberId => ids[i]!;
export const nameOf = (i: number): string => `etcd-${i}`;
export const endpointOf = (i: number, path: PathName = 'direct'): string => (path === 'direct' ? `http://127.0.0.1:${4001 + 10 * i}` : `${path}://etcd-${i}`);

const failures: Record<Exclude<Reachability, 'ok'>, (endpoint: string) => EtcdFailure> = {
  refused: (e) => ({ kind: 'refused', grpcCode: 14, message: `connect ECONNREFUSED ${e.replace(/^\w+:\/\//, '')}` }),
  timeout: () => ({ kind: 'timeout', grpcCode: 4, message: 'Deadline exceeded' }),
  tls: () => ({ kind: 'tls', grpcCode: 14, message: 'unable to verify the first certificate' }),
  auth: () => ({ kind: 'auth', grpcCode: 16, message: 'etcdserver: invalid auth token' }),
  other: () => ({ kind: 'other', message: 'socket hang up' }),
};

export const failureOf = (reachability: Exclude<Reachability, 'ok'>, endpoint = 'http://127.0.0.1:1'): EtcdFailure => failures[reachability](endpoint);

export interface MemberSpec {
  /** Index into `ids`; names the member etcd-<i>. */
  i: number;
  learner?: boolean;
  /** Added but never started: no name, no client URLs, no answer. */
  unstarted?: boolean;
  /** Reachability per path; a single value means the direct path only. Default: direct ok. */
  paths?: Reachability | Partial<Record<PathName, Reachability>>;
  /** Index of the member this one names leader; 'none' for no leader. Ignored when unreachable. */
  leader?: number | 'none';
  term?: number;
  applied?: number;
  latencyMs?: number;
  alarms?: string[];
  errors?: string[];
  /** dbSize and dbSizeInUse in bytes (default: 20480, and no in-use figure). */
  db?: readonly [number, number];
  /** The etcd cluster_id this member answers with (default: FIXTURE_CLUSTER_ID). */
  clusterId?: string;
}

/** Every fixture member belongs to this one etcd cluster unless its spec says otherwise. */
export const FIXTURE_CLUSTER_ID = 'c1a55e5c1a55e5';

export function memberProbe(spec: MemberSpec): MemberProbe {
  const { i } = spec;
  const byPath: Partial<Record<PathName, Reachability>> = typeof spec.paths === 'string' ? { direct: spec.paths } : (spec.paths ?? { direct: 'ok' });
  const paths: PathProbe[] = spec.unstarted
    ? []
    : Object.entries(byPath).map(([path, reachability]) => {
        const endpoint = endpointOf(i, path as PathName);
        const probe: PathProbe = { path: path as PathName, endpoint, reachability, latencyMs: spec.latencyMs ?? 5 + i };
        if (reachability !== 'ok') probe.failure = failureOf(reachability, endpoint);
        return probe;
      });
  const probe: MemberProbe = {
    member: {
      id: id(i),
      name: spec.unstarted ? '' : nameOf(i),
      clientUrls: spec.unstarted ? [] : [endpointOf(i)],
      peerUrls: [`http://127.0.0.1:${4002 + 10 * i}`],
      isLearner: !!spec.learner,
    },
    paths,
  };
  if (paths.some((p) => p.reachability === 'ok')) {
    probe.status = {
      leaderId: spec.leader === undefined || spec.leader === 'none' ? NO_LEADER : id(spec.leader),
      raftTerm: spec.term ?? 2,
      raftIndex: (spec.applied ?? 100) + 1,
      raftAppliedIndex: spec.applied ?? 100,
      alarms: spec.alarms ?? [],
      errors: spec.errors ?? [],
      version: '3.4.30',
      dbSize: spec.db?.[0] ?? 20480,
      ...(spec.db ? { dbSizeInUse: spec.db[1] } : {}),
      isLearner: !!spec.learner,
      clusterId: spec.clusterId ?? FIXTURE_CLUSTER_ID,
    };
  }
  return probe;
}

export const sample = (at: number, members: MemberSpec[]): ProbeSample => ({
  at,
  members: members.map(memberProbe),
  listFailures: [],
  seeds: [],
});

export const view = (at: number, members: MemberSpec[]): ClusterView => buildClusterView(sample(at, members));

/**
 * n voting members etcd-0..n-1, all answering and naming `leader` at `term`; `override` changes
 * single members (e.g. { 0: { paths: 'refused' } }).
 */
export function cluster(
  at: number,
  n: number,
  opts: { leader?: number | 'none'; term?: number; override?: Record<number, Partial<MemberSpec>> } = {},
): ClusterView {
  const members = Array.from({ length: n }, (_, i): MemberSpec => ({
    i,
    leader: opts.leader ?? 0,
    term: opts.term ?? 2,
    ...opts.override?.[i],
  }));
  return view(at, members);
}

/** The view with where members run, as kube access reports it: `hosts[i]` is member etcd-i's. */
export const withHosts = (v: ClusterView, hosts: Record<number, HostEvidence>): ClusterView => ({
  ...v,
  members: v.members.map((m) => {
    const i = ids.indexOf(m.id as (typeof ids)[number]);
    return hosts[i] ? { ...m, host: hosts[i] } : m;
  }),
});

export const policy = (input: PolicyInput = {}): Policy => parsePolicy(input);

/** A random() that always returns r. */
export const fixedRandom = (r: number) => (): number => r;

/** A small seeded generator (mulberry32), so a failing random case names a seed that replays it. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
