// Views as large as the view limits let them grow: every text far past its limit (so the cut is
// what bounds it), in characters that take the most bytes as JSON, every list past its cap, and
// every path of every member failing. The size tests measure these.
import { MAX_INCIDENT_VIEWS } from '../../functions/core/view/view-history.ts';
import { TEXT_LIMITS as T, VIEW_LIMITS as V } from '../../functions/core/common/view-limits.ts';
import { PATH_NAMES, type MemberProbe, type ProbeSample } from '../../functions/core/common/types.ts';
import { buildClusterView, type ClusterView } from '../../functions/core/view/view.ts';

/** Three bytes as UTF-8 each, and control characters that JSON escapes to six: the dearest mix. */
const DEAR = '€\u0001漢\u001f';
/** `limit` bytes' worth many times over, from `seed`, so that only the cut bounds it. */
export const overlong = (seed: string, limit: number): string => `${seed}:${DEAR.repeat(limit)}`;

const hex = (n: number, width = 16): string => `f${n.toString(16).padStart(width - 1, '0')}`;

function member(i: number, size: number): MemberProbe {
  const url = (port: number) => `https://${'h'.repeat(T.url)}-${i}.example:${port}`;
  return {
    member: {
      id: hex(i + 1),
      name: overlong(`cp-${i}`, T.name),
      clientUrls: Array.from({ length: V.urls + 2 }, () => url(2379)),
      peerUrls: Array.from({ length: V.urls + 2 }, () => url(2380)),
      isLearner: false,
    },
    paths: PATH_NAMES.map((path) => ({
      path,
      endpoint: overlong(`${path}-${i}`, T.endpoint),
      reachability: 'timeout',
      latencyMs: 30_000,
      failure: { kind: 'timeout', grpcCode: 4, message: overlong(`${path} to member ${i} of ${size} timed out`, T.message) },
    })),
    status: {
      leaderId: hex(1),
      raftTerm: Number.MAX_SAFE_INTEGER,
      raftIndex: Number.MAX_SAFE_INTEGER,
      raftAppliedIndex: Number.MAX_SAFE_INTEGER,
      alarms: Array.from({ length: V.alarms + 2 }, () => overlong('NOSPACE', T.alarm)),
      errors: Array.from({ length: V.errors + 2 }, () => overlong('etcdserver: mvcc: database space exceeded', T.statusError)),
      version: overlong('3.5.21', T.version),
      dbSize: Number.MAX_SAFE_INTEGER,
      isLearner: false,
      clusterId: hex(7),
    },
    host: {
      node: overlong(`node-${i}`, T.name),
      nodeExists: true,
      pod: overlong(`kube-system/etcd-${i}`, T.pod),
      machine: { name: overlong(`machine-${i}`, T.name), deleting: true },
    },
  };
}

/**
 * A probe of `size` members at `at` that, cut to the limits, makes a view as large as they allow:
 * every path failing and a status besides, which no probe gives at once, so it bounds every probe.
 */
export function worstSample(size: number, at = 1_750_000_000_000): ProbeSample {
  return {
    at,
    members: Array.from({ length: size }, (_, i) => member(i, size)),
    listFailures: [],
    seeds: Array.from({ length: V.identityReports + 4 }, (_, i) => ({ endpoint: overlong(`seed-${i}`, T.endpoint), clusterId: hex(7) })),
    listedBy: { endpoint: overlong('seed-0', T.endpoint), clusterId: hex(7) },
    pathLookFailure: overlong('the workload cluster did not answer', T.message),
    machines: Array.from({ length: V.machines }, (_, i) => ({
      name: overlong(`machine-${i}`, T.name),
      nodeName: overlong(`node-${i}`, T.name),
      deleting: true,
      uid: overlong(`uid-${i}`, T.name),
    })),
  };
}

/** The view of worstSample. */
export const worstView = (size: number, at?: number): ClusterView => buildClusterView(worstSample(size, at));

/** An incident's history at its largest: MAX_INCIDENT_VIEWS worst views, a second apart. */
export const worstViews = (size: number): ClusterView[] => Array.from({ length: MAX_INCIDENT_VIEWS }, (_, i) => worstView(size, 1_750_000_000_000 + i * 1_000));
