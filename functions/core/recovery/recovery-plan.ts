// When quorum is lost: a plan a person follows, never one we run. The survivor with the most
// recent data (highest raft term, then applied index, as each answering member's Status says) is
// restarted once with --force-new-cluster, which keeps its data and makes it a one-member cluster;
// the others are added back one at a time. A snapshot this project took is the fallback, restored
// with the tool the etcd version ships (3.4: etcdctl snapshot restore; 3.5 on: etcdutl). Pure: the
// commands are text, exact for the endpoints and certificates given, and each says where it runs.
import type { MemberView } from '../view/index.ts';
import { describeDuration, listWords, memberAlarms } from '../view/index.ts';

/** A snapshot this project kept for the cluster before a removal. */
export interface SnapshotKept {
  location: string;
  bytes: number;
  sha256: string;
  takenAt: number;
}

/** How the members run: kubeadm's static pods (its paths and files), or a deployment we do not know. */
export type Deployment = 'kubeadm' | 'unknown';

export interface RecoveryInput {
  members: readonly MemberView[];
  deployment: Deployment;
  /** The client certificates etcdctl is given, as paths (the ones this run was given). */
  tls?: { cacert?: string; cert?: string; key?: string };
  snapshot?: SnapshotKept;
  now: number;
}

/** Where a command runs: anywhere etcdctl reaches the survivor, or on a member's own host. */
export type RunsOn = 'anywhere' | { host: string };

export interface RecoveryCommand {
  run: string;
  on: RunsOn;
}

export interface RecoveryStep {
  what: string;
  /** None when the step is an edit of the deployment the plan cannot spell (an unknown one). */
  commands: RecoveryCommand[];
}

export interface Survivor {
  name: string;
  id: string;
  term: number;
  appliedIndex: number;
  version: string;
  clientUrl: string;
}

export interface RecoveryPlan {
  /** Undefined when no member answered its status: only a snapshot is left. */
  survivor?: Survivor;
  snapshot?: SnapshotKept & { ageMs: number };
  steps: RecoveryStep[];
  /** One sentence for a block's message. */
  summary: string;
}

/** kubeadm's files: the etcd static pod's manifest, its data directory, the etcd client certificates. */
export const KUBEADM = {
  manifest: '/etc/kubernetes/manifests/etcd.yaml',
  stopped: '/etc/kubernetes/etcd.yaml.stopped',
  dataDir: '/var/lib/etcd',
  cacert: '/etc/kubernetes/pki/etcd/ca.crt',
  cert: '/etc/kubernetes/pki/etcd/healthcheck-client.crt',
  key: '/etc/kubernetes/pki/etcd/healthcheck-client.key',
} as const;

/**
 * The answering voting member with the most recent data: highest term, then applied index, then
 * raft index; a healthy one first among equals. A member whose own alarm says its data is corrupt
 * is never the one to recover from.
 */
export function survivorOf(members: readonly MemberView[]): Survivor | undefined {
  const answered = members.filter((m) => !m.isLearner && m.status && m.started && memberAlarms(m.status).length === 0);
  const best = [...answered].sort(
    (a, b) =>
      b.status!.raftTerm - a.status!.raftTerm ||
      b.status!.raftAppliedIndex - a.status!.raftAppliedIndex ||
      b.status!.raftIndex - a.status!.raftIndex ||
      Number(b.healthy) - Number(a.healthy),
  )[0];
  if (!best?.status) return undefined;
  const clientUrl = best.paths.find((p) => p.path === 'direct' && p.reachability === 'ok')?.endpoint ?? best.clientUrls[0] ?? '';
  return {
    name: best.name,
    id: best.id,
    term: best.status.raftTerm,
    appliedIndex: best.status.raftAppliedIndex,
    version: best.status.version,
    clientUrl,
  };
}

/** etcdctl with the endpoint and certificates, as a command line (paths quoted only when they need it). */
function etcdctl(input: RecoveryInput, endpoint: string, args: string): string {
  const tls = input.deployment === 'kubeadm' ? { cacert: KUBEADM.cacert, cert: KUBEADM.cert, key: KUBEADM.key } : (input.tls ?? {});
  const flags = (['cacert', 'cert', 'key'] as const).flatMap((k) => (tls[k] ? [`--${k}=${quote(tls[k])}`] : []));
  return ['etcdctl', `--endpoints=${endpoint}`, ...flags, args].join(' ');
}

const quote = (value: string): string => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);

/** 3.4's etcdctl restores; from 3.5 on, etcdutl does (etcdctl's restore is deprecated there). */
const restoreTool = (version: string): string => (/^3\.[0-4]\./.test(version) ? 'etcdctl' : 'etcdutl');

const hostOf = (m: MemberView): string => m.host?.node ?? m.name;

function stopEveryMember(input: RecoveryInput, running: readonly MemberView[]): RecoveryStep {
  const names = listWords(running.map((m) => m.name));
  const what = `Stop etcd on every member still running (${names}), so none takes a write while the cluster is rebuilt`;
  if (input.deployment !== 'kubeadm') return { what: `${what}: stop its service or process.`, commands: [] };
  return {
    what: `${what}: move its static pod's manifest away on its node.`,
    commands: running.map((m) => ({ run: `mv ${KUBEADM.manifest} ${KUBEADM.stopped}`, on: { host: hostOf(m) } })),
  };
}

function forceNewCluster(input: RecoveryInput, survivor: Survivor, host: string): RecoveryStep[] {
  const check = (what: string): RecoveryStep => ({
    what,
    commands: [
      { run: etcdctl(input, survivor.clientUrl, 'endpoint status -w table'), on: 'anywhere' },
      { run: etcdctl(input, survivor.clientUrl, 'member list -w table'), on: 'anywhere' },
    ],
  });
  if (input.deployment === 'kubeadm')
    return [
      {
        what: `Keep a copy of ${survivor.name}'s data before anything rewrites it.`,
        commands: [{ run: `cp -a ${KUBEADM.dataDir} ${KUBEADM.dataDir}.before-recovery`, on: { host } }],
      },
      {
        what: `Start ${survivor.name} once with --force-new-cluster: add "- --force-new-cluster" to the etcd command in ${KUBEADM.stopped}, then move it back.`,
        commands: [{ run: `mv ${KUBEADM.stopped} ${KUBEADM.manifest}`, on: { host } }],
      },
      check(`Check that ${survivor.name} is a one-member cluster, its own leader, with its data.`),
      {
        what: `Remove --force-new-cluster from ${KUBEADM.manifest} again (the kubelet restarts etcd): left in, every start would force a new cluster.`,
        commands: [],
      },
    ];
  return [
    { what: `Keep a copy of ${survivor.name}'s data directory (its --data-dir) before anything rewrites it.`, commands: [] },
    {
      what: `Start ${survivor.name} once with --force-new-cluster added to its flags, on its own data directory: it becomes a one-member cluster that keeps its data.`,
      commands: [],
    },
    check(`Check that ${survivor.name} is a one-member cluster, its own leader, with its data.`),
    { what: `Remove --force-new-cluster from its flags and restart it: left in, every start would force a new cluster.`, commands: [] },
  ];
}

function addBack(input: RecoveryInput, survivor: Survivor, others: readonly MemberView[]): RecoveryStep[] {
  if (input.deployment === 'kubeadm')
    return [
      {
        what: `Add the other members back one at a time: on each of ${listWords(others.map(hostOf))}, kubeadm reset, then kubeadm join --control-plane (with Cluster API: delete its Machine, and KubeadmControlPlane replaces it). kubeadm join adds the member itself.`,
        commands: [],
      },
    ];
  return others.flatMap((m) => [
    {
      what: `Add ${m.name} back: member add prints its ETCD_INITIAL_CLUSTER; then empty its data directory and start it with --initial-cluster-state existing and that --initial-cluster, and wait until member list shows it started before the next.`,
      commands: [
        { run: etcdctl(input, survivor.clientUrl, `member add ${m.name} --peer-urls=${m.peerUrls.join(',')}`), on: 'anywhere' as const },
        { run: etcdctl(input, survivor.clientUrl, 'member list -w table'), on: 'anywhere' as const },
      ],
    },
  ]);
}

function fromSnapshot(input: RecoveryInput, snapshot: SnapshotKept, version: string, first: MemberView | undefined): RecoveryStep[] {
  const name = first?.name ?? 'NAME';
  const peer = first?.peerUrls[0] ?? 'PEER_URL';
  const dataDir = input.deployment === 'kubeadm' ? `${KUBEADM.dataDir}.restored` : 'NEW_DATA_DIR';
  const restore = `${restoreTool(version)} snapshot restore ${quote(snapshot.location)} --name ${name} --initial-cluster ${name}=${peer} --initial-advertise-peer-urls ${peer} --data-dir ${dataDir}`;
  return [
    {
      what: `Check the snapshot is the one kept: its SHA-256 must be ${snapshot.sha256}.`,
      commands: [{ run: `sha256sum ${quote(snapshot.location)}`, on: { host: first ? hostOf(first) : 'the host' } }],
    },
    {
      what: `Restore it as a one-member cluster of ${name}, then start ${name} on ${dataDir}${input.deployment === 'kubeadm' ? ` (point the etcd-data volume in ${KUBEADM.stopped} at it)` : ''}.`,
      commands: [{ run: restore, on: { host: first ? hostOf(first) : 'the host' } }],
    },
  ];
}

/** The snapshot's way, for when the survivor's data cannot be used (a disk that lost it): older, but kept whole. */
function insteadFromSnapshot(input: RecoveryInput, snapshot: SnapshotKept, survivor: Survivor, member: MemberView | undefined): RecoveryStep[] {
  const [check, restore] = fromSnapshot(input, snapshot, survivor.version, member);
  return [
    {
      what: `Only if ${survivor.name}'s data cannot be used: restore the snapshot kept instead of starting it with --force-new-cluster, losing what was written after it. ${check!.what} ${restore!.what}`,
      commands: [...check!.commands, ...restore!.commands],
    },
  ];
}

/** The recovery plan for a cluster that lost quorum; the caller decides that it did. */
export function recoveryPlan(input: RecoveryInput): RecoveryPlan {
  const survivor = survivorOf(input.members);
  const voting = input.members.filter((m) => !m.isLearner && m.started);
  const snapshot = input.snapshot ? { ...input.snapshot, ageMs: Math.max(0, input.now - input.snapshot.takenAt) } : undefined;
  const snapshotWords = snapshot
    ? `the newest snapshot kept is ${snapshot.location} (${snapshot.bytes} bytes, SHA-256 ${snapshot.sha256}, ${describeDuration(snapshot.ageMs)} old)`
    : 'no snapshot of it was kept here';
  if (!survivor) {
    const version = voting.find((m) => m.status)?.status?.version ?? '3.5.0';
    return {
      ...(snapshot ? { snapshot } : {}),
      steps: snapshot
        ? [stopEveryMember(input, voting), ...fromSnapshot(input, snapshot, version, voting[0]), ...addBack(input, survivorAt(voting[0]), voting.slice(1))]
        : [],
      summary: `No member answered its status, so none can be recovered from; ${snapshotWords}. Never run --force-new-cluster on a member that may not hold the newest data.`,
    };
  }
  const host = hostOf(voting.find((m) => m.id === survivor.id)!);
  const running = input.members.filter((m) => m.status && !m.isLearner);
  const others = voting.filter((m) => m.id !== survivor.id);
  return {
    survivor,
    ...(snapshot ? { snapshot } : {}),
    steps: [
      stopEveryMember(input, running),
      ...forceNewCluster(input, survivor, host),
      ...addBack(input, survivor, others),
      ...(snapshot
        ? insteadFromSnapshot(
            input,
            snapshot,
            survivor,
            voting.find((m) => m.id === survivor.id),
          )
        : []),
    ],
    summary:
      `${survivor.name} holds the most recent data of the members that answer (term ${survivor.term}, applied index ${survivor.appliedIndex}): ` +
      `recover the cluster from it with --force-new-cluster, then add the others back one at a time (\`etcd-remediator plan\` prints each command; nothing runs them for you); ` +
      `${snapshotWords}, older than the survivor's data.`,
  };
}

/** A member as the restored one, for the steps that add the others back through it. */
const survivorAt = (m: MemberView | undefined): Survivor => ({
  name: m?.name ?? 'NAME',
  id: m?.id ?? '',
  term: 0,
  appliedIndex: 0,
  version: '',
  clientUrl: m?.clientUrls[0] ?? 'CLIENT_URL',
});
