// When quorum is lost: a plan a person follows, never one we run. etcd's documented disaster
// recovery (op-guide/recovery.md): a snapshot saved from the member that answers with the most
// recent data (highest raft term, then applied index, as each answering member's Status says),
// restored on every member into a fresh data directory with the tool the etcd version ships (3.4:
// etcdctl snapshot restore; 3.5 on: etcdutl), every member started on it. Not --force-new-cluster:
// members added back after it can diverge from it on etcd 3.5 (etcd-io/etcd#14009), which a test
// here reproduced. A snapshot this project kept before a removal is the fallback when no member
// answers. Pure: the commands are text, exact for the endpoints and certificates given, and each
// says where it runs.
import type { MemberView } from '../view/index.ts';
import { KUBEADM_ETCD_TLS } from '../kubernetes/index.ts';
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
  ...KUBEADM_ETCD_TLS,
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
  const tls = input.deployment === 'kubeadm' ? KUBEADM_ETCD_TLS : (input.tls ?? {});
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

/** The snapshot file a recovery restores: one saved from the survivor now, or the newest kept. */
const RECOVERY_SNAPSHOT = 'recovery.db';

/** Where a member's restored data goes: a new directory, so the old one stays as it was. */
const restoredDir = (input: RecoveryInput, m: MemberView): string => (input.deployment === 'kubeadm' ? `${KUBEADM.dataDir}-restored` : `${m.name}.restored`);

/** Restored on every member, each into a new data directory, then every member started on it. */
function restoreOnEveryMember(input: RecoveryInput, file: string, version: string, voting: readonly MemberView[]): RecoveryStep[] {
  const initialCluster = voting.map((m) => `${m.name}=${m.peerUrls[0] ?? ''}`).join(',');
  const restore = (m: MemberView): RecoveryCommand => ({
    run: `${restoreTool(version)} snapshot restore ${quote(file)} --name ${m.name} --initial-cluster ${initialCluster} --initial-advertise-peer-urls ${m.peerUrls[0] ?? ''} --data-dir ${quote(restoredDir(input, m))}`,
    on: { host: hostOf(m) },
  });
  const start =
    input.deployment === 'kubeadm'
      ? `On each, point the etcd-data hostPath in ${KUBEADM.stopped} at ${KUBEADM.dataDir}-restored and move the manifest back to ${KUBEADM.manifest}.`
      : `On each, start etcd with its --data-dir pointed at its restored directory, its other flags as before.`;
  return [
    {
      what: `Restore ${file} on every member (${listWords(voting.map((m) => m.name))}), each into a new data directory (its current one stays as it was), in the directory where ${file} was copied.`,
      commands: voting.map(restore),
    },
    { what: `Start every member on its restored data. ${start}`, commands: [] },
  ];
}

function checkWhole(input: RecoveryInput, endpoint: string, voting: readonly MemberView[]): RecoveryStep {
  return {
    what: `Check that the ${voting.length} members are started and agree on a leader, the data as the snapshot held it.`,
    commands: [
      { run: etcdctl(input, endpoint, 'endpoint status --cluster -w table'), on: 'anywhere' },
      { run: etcdctl(input, endpoint, 'member list -w table'), on: 'anywhere' },
    ],
  };
}

/** The recovery plan for a cluster that lost quorum; the caller decides that it did. */
export function recoveryPlan(input: RecoveryInput): RecoveryPlan {
  const survivor = survivorOf(input.members);
  const voting = input.members.filter((m) => !m.isLearner && m.started);
  const running = input.members.filter((m) => m.status && !m.isLearner);
  const snapshot = input.snapshot ? { ...input.snapshot, ageMs: Math.max(0, input.now - input.snapshot.takenAt) } : undefined;
  const snapshotWords = snapshot
    ? `the newest snapshot kept is ${snapshot.location} (${snapshot.bytes} bytes, SHA-256 ${snapshot.sha256}, ${describeDuration(snapshot.ageMs)} old)`
    : 'no snapshot of it was kept here';
  const version = survivor?.version || voting.find((m) => m.status)?.status?.version || '3.5.0';
  const endpoint = survivor?.clientUrl ?? voting[0]?.clientUrls[0] ?? 'CLIENT_URL';
  if (!survivor) {
    return {
      ...(snapshot ? { snapshot } : {}),
      steps: snapshot
        ? [
            {
              what: `Check the snapshot is the one kept: its SHA-256 must be ${snapshot.sha256}; then copy it to every member's host.`,
              commands: [{ run: `sha256sum ${quote(snapshot.location)}`, on: { host: 'the machine that keeps it' } }],
            },
            stopEveryMember(input, running),
            ...restoreOnEveryMember(input, snapshot.location, version, voting),
            checkWhole(input, endpoint, voting),
          ]
        : [],
      summary: `No member answered its status, so none holds data to save; ${snapshotWords}.${snapshot ? ' Restored on every member, it loses what was written after it.' : ''}`,
    };
  }
  return {
    survivor,
    ...(snapshot ? { snapshot } : {}),
    steps: [
      {
        what: `Save a snapshot of ${survivor.name}, the member with the most recent data (etcd serves it without quorum), and check it; then copy ${RECOVERY_SNAPSHOT} to every member's host.`,
        commands: [
          { run: etcdctl(input, survivor.clientUrl, `snapshot save ${RECOVERY_SNAPSHOT}`), on: 'anywhere' },
          { run: `${restoreTool(version)} snapshot status ${RECOVERY_SNAPSHOT} -w table`, on: 'anywhere' },
        ],
      },
      stopEveryMember(input, running),
      ...restoreOnEveryMember(input, RECOVERY_SNAPSHOT, version, voting),
      checkWhole(input, survivor.clientUrl, voting),
    ],
    summary:
      `${survivor.name} holds the most recent data of the members that answer (term ${survivor.term}, applied index ${survivor.appliedIndex}): ` +
      `save a snapshot of it and restore that on every member (\`etcd-remediator plan\` prints each command; nothing runs them for you); ` +
      `${snapshotWords}${snapshot ? ", older than the survivor's data" : ''}.`,
  };
}
