// What `probe` says of each member's paths and host: one row per path probed, in the order the
// policy tries them, and, with kube access, where the member runs.
import { describeFailure, describePath, type ClusterView, type MemberView } from '../../functions/core/view/index.ts';
import type { HostEvidence } from '../../functions/core/common/index.ts';

/** e.g. "node cp-1 (no Node object), pod kube-system/etcd-cp-1, machine wl-cp-1 (deleting)". */
export function describeHost(host: HostEvidence): string {
  const node = host.node === undefined ? 'node unknown' : `node ${host.node}${host.nodeExists ? '' : ' (no Node object)'}`;
  const pod = host.pod === undefined ? 'no etcd pod' : `pod ${host.pod}`;
  const machine = host.machine ? [`machine ${host.machine.name}${host.machine.deleting ? ' (deleting)' : ''}`] : [];
  return [node, pod, ...machine].join(', ');
}

const label = (m: MemberView): string => `${m.name || '(unstarted)'} (${m.id})`;

/** The rows under the member table: each member, where it runs, and every path it was probed on. */
export function renderPaths(view: ClusterView): string {
  const lines = view.members.flatMap((m) => [
    `  ${label(m)}${m.host ? `: ${describeHost(m.host)}` : ''}`,
    ...(m.paths.length === 0 ? ['    no path was probed'] : m.paths.map((p) => `    ${describePath(p)} (${p.latencyMs}ms)`)),
  ]);
  const lookFailure = view.pathLookFailure ? [`kube: ${view.pathLookFailure}`] : [];
  return ['paths, in the order tried:', ...lines, ...lookFailure].join('\n');
}

/** The same in `probe --json`: a member's paths and host. */
export function memberPathsJson(m: MemberView) {
  return {
    paths: m.paths.map((p) => ({
      path: p.path,
      endpoint: p.endpoint,
      ok: p.reachability === 'ok',
      reachability: p.reachability,
      latencyMs: p.latencyMs,
      ...(p.failure ? { error: describeFailure(p.failure, p.path) } : {}),
      says: describePath(p),
    })),
    host: m.host ?? null,
  };
}
