// `probe`: every member on its own, as etcdctl endpoint status would show it, plus who leads and
// whether the cluster holds quorum.
import { clusterMismatch, type ClusterView, type MemberView, describeFailure, describePaths } from '../../functions/core/view/index.ts';
import { NO_LEADER } from '../../functions/core/common/index.ts';
import { parseFlags } from './args.ts';
import { accessHelp, accessOptions, clusterAccessFromFlags } from './cluster-flags.ts';
import { openClusterProbe, type Probed } from './cluster-probe.ts';
import { escapeControlsIn } from './control-chars.ts';
import { memberPathsJson, renderPaths } from './member-paths.ts';
import { EXIT, printJson, table } from './output.ts';

export const help = `usage: etcd-remediator probe --endpoints URL[,URL…] [options]
       etcd-remediator probe --kubeconfig F [--cluster NAME] [options]

Asks every member for its status on its own, over every path (its client URL, a port-forward to
its etcd pod, the exec relay), so no single member is needed as "the" client. Prints one row per
member (reachable or the error, the leader as that member sees it, raft term and index, learner,
latency); then each member's paths in the order tried, each answered or how it failed, and with
--kubeconfig where the member runs (node, whether the Node exists, etcd pod, Machine) or why the
workload cluster could not say; then the leader consensus, quorum and etcd's cluster id.
Exits 0 when the cluster holds quorum, 1 when it does not, 2 when the endpoints answer with more
than one cluster id (CLUSTER_MISMATCH: they are not one cluster).

${accessHelp}`;

const nameOf = (view: ClusterView, id: string | undefined): string => {
  if (!id || id === NO_LEADER) return 'none';
  return view.members.find((m) => m.id === id)?.name || id;
};

function reachability(m: MemberView): string {
  if (m.reachable) return 'yes';
  const failed = m.paths.find((p) => p.reachability !== 'ok');
  if (!m.started) return 'never started';
  return failed?.failure ? describeFailure(failed.failure) : (failed?.reachability ?? 'not probed');
}

export function probeJson({ view }: Probed) {
  const mismatch = clusterMismatch(view);
  return {
    members: view.members.map((m) => ({
      name: m.name,
      id: m.id,
      endpoint: m.paths[0]?.endpoint ?? m.clientUrls[0] ?? '',
      reachable: m.reachable,
      ...(m.reachable ? {} : { error: reachability(m) }),
      healthy: m.healthy,
      leader: m.status ? { id: m.status.leaderId, name: nameOf(view, m.status.leaderId) } : null,
      term: m.status?.raftTerm ?? null,
      index: m.status?.raftIndex ?? null,
      appliedIndex: m.status?.raftAppliedIndex ?? null,
      learner: m.isLearner,
      latencyMs: m.latencyMs === undefined ? null : Math.round(m.latencyMs * 10) / 10,
      alarms: m.status?.alarms ?? [],
      ...memberPathsJson(m),
    })),
    leader: { id: view.leader.id ?? null, name: view.leader.name ?? null, consensus: view.leader.consensus, term: view.leader.term ?? null },
    quorum: { voting: view.quorum.voting, healthy: view.quorum.healthyVoting, up: view.quorum.votingUp, size: view.quorum.size, ok: view.quorum.ok },
    clusterId: view.identity?.id ?? null,
    clusterIds: view.identity?.ids ?? [],
    identity: view.identity?.reports ?? [],
    pathLookFailure: view.pathLookFailure ?? null,
    ...(mismatch ? { problem: { reason: 'CLUSTER_MISMATCH', message: mismatch.message } } : {}),
  };
}

/**
 * The alarms the members raised, one line each. A NOSPACE alarm counts no member down (it is the
 * cluster's quota reached), so the quorum line alone would not show it.
 */
function alarmLines(view: Probed['view']): string {
  const raised = new Map<string, string[]>();
  for (const m of view.members) for (const alarm of m.status?.alarms ?? []) raised.set(alarm, [...(raised.get(alarm) ?? []), m.name || m.id]);
  return [...raised]
    .map(
      ([alarm, by]) =>
        `alarm: ${alarm} raised by ${by.join(', ')}${alarm === 'NOSPACE' ? ': etcd refuses every write until space is freed and the alarm disarmed' : ''}\n`,
    )
    .join('');
}

export function renderProbe(probed: Probed): string {
  // Names, hosts and etcd's errors are the cluster's text: escaped once here, each line built below is its own.
  const { view, sample } = escapeControlsIn(probed);
  const mismatch = clusterMismatch(view);
  const identityLine = mismatch ? `CLUSTER_MISMATCH: ${mismatch.message}` : `cluster id: ${view.identity?.id ?? 'unknown (no member answered)'}`;
  // Seeds of two clusters give no member list: which cluster answered is all there is to say.
  if (mismatch && view.members.length === 0) return identityLine;
  if (view.members.length === 0) {
    const lookFailure = view.pathLookFailure ? `\nkube: ${view.pathLookFailure}` : '';
    return `no endpoint answered a member list: ${describePaths(sample.listFailures)}${lookFailure}\nquorum: unknown (no member list)`;
  }
  const rows = view.members.map((m) => [
    m.name || '(unstarted)',
    m.id,
    m.paths[0]?.endpoint ?? m.clientUrls[0] ?? '',
    reachability(m),
    m.status ? nameOf(view, m.status.leaderId) : '',
    m.status ? String(m.status.raftTerm) : '',
    m.status ? String(m.status.raftIndex) : '',
    String(m.isLearner),
    m.latencyMs === undefined ? '' : `${m.latencyMs.toFixed(1)}ms`,
  ]);
  const header = ['MEMBER', 'ID', 'ENDPOINT', 'REACHABLE', 'LEADER (AS SEEN)', 'TERM', 'INDEX', 'LEARNER', 'LATENCY'];
  const { leader, quorum } = view;
  const reporters = leader.reports.length;
  const leaderLine =
    leader.consensus === 'agreed'
      ? `leader: ${nameOf(view, leader.id)} (${leader.id}) agreed by all ${reporters} members that answered${leader.term === undefined ? '' : `, term ${leader.term}`}`
      : leader.consensus === 'split'
        ? `leader: split (${leader.reports.map((r) => `${nameOf(view, r.memberId)} sees ${nameOf(view, r.leaderId)}`).join(', ')})`
        : 'leader: none (no member that answered sees a leader)';
  // The leader may answer its followers but not us: it still votes, and the line says so.
  const alsoUp = quorum.votingUp > quorum.healthyVoting ? `, ${quorum.votingUp} up (the leader answers its followers, not us)` : '';
  const quorumLine = `quorum: ${quorum.healthyVoting} of ${quorum.voting} voting members healthy${alsoUp}, ${quorum.size} needed: ${quorum.ok ? 'ok' : 'LOST'}`;
  return `${table(header, rows)}\n${renderPaths(view)}\n${leaderLine}; ${quorumLine}\n${alarmLines(view)}${identityLine}`;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags('probe', argv, accessOptions);
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  const cluster = await clusterAccessFromFlags(values);
  const prober = openClusterProbe(cluster);
  try {
    const probed = await prober.probe();
    if (values.json) printJson(probeJson(probed));
    else process.stdout.write(`${renderProbe(probed)}\n`);
    if (clusterMismatch(probed.view)) return EXIT.usage;
    return probed.view.quorum.ok ? EXIT.ok : EXIT.error;
  } finally {
    await prober.close();
  }
}
