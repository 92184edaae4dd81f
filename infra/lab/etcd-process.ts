// Finding and starting one etcd member process, with its logs kept in a file for diagnosis.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { KUBEADM_FLAGS, etcdVersionOf, spellEtcdFlags, type EtcdVersion } from './etcd-flags.ts';

export function resolveEtcdBin(explicit?: string): string {
  const candidate = explicit ?? process.env.ETCD_BIN;
  if (candidate) {
    if (isExecutable(candidate)) return candidate;
    throw new Error(`etcd binary ${candidate} is not an executable file; set ETCD_BIN to etcd, or install Debian's etcd-server`);
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const file = path.join(dir, 'etcd');
    if (isExecutable(file)) return file;
  }
  throw new Error("etcd not found on PATH: install Debian's etcd-server (apt-get install etcd-server) or set ETCD_BIN to the etcd binary");
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export interface EtcdMemberSpec {
  name: string;
  clientPort: number;
  /** What the cluster tells clients to use: the member's fault proxy, not its real port. */
  advertiseClientUrl: string;
  /** The peer URL the member advertises: its peer fault proxy's, when it has one. */
  peerUrl: string;
  /** Where the member listens for peers when that is not peerUrl (behind a peer fault proxy). */
  listenPeerUrl?: string;
  /** name=peerUrl,... as etcd's --initial-cluster expects. */
  initialCluster: string;
  clusterState: 'new' | 'existing';
  token: string;
  heartbeatMs: number;
  electionTimeoutMs: number;
  dataDir: string;
  logFile: string;
  /** Flags beyond the lab's own, appended last. */
  extraArgs?: readonly string[];
  /**
   * Client TLS as kubeadm runs etcd: an https client URL, the member's server certificate, and
   * only clients with a certificate of this CA (--client-cert-auth). Peers stay plain http: they
   * talk on loopback only, and no caller of the lab ever dials a peer URL.
   */
  tls?: { certFile: string; keyFile: string; trustedCaFile: string };
}

export const clientScheme = (spec: Pick<EtcdMemberSpec, 'tls'>): 'https' | 'http' => (spec.tls ? 'https' : 'http');

/** The member's command line, kubeadm's flags and the spec's extra ones spelled as `version` reads them. */
export function etcdArgs(spec: EtcdMemberSpec, version: EtcdVersion): string[] {
  return spellEtcdFlags(
    [
      '--name',
      spec.name,
      '--data-dir',
      spec.dataDir,
      '--listen-client-urls',
      `${clientScheme(spec)}://127.0.0.1:${spec.clientPort}`,
      '--advertise-client-urls',
      spec.advertiseClientUrl,
      '--listen-peer-urls',
      spec.listenPeerUrl ?? spec.peerUrl,
      '--initial-advertise-peer-urls',
      spec.peerUrl,
      '--initial-cluster',
      spec.initialCluster,
      '--initial-cluster-state',
      spec.clusterState,
      '--initial-cluster-token',
      spec.token,
      '--heartbeat-interval',
      String(spec.heartbeatMs),
      '--election-timeout',
      String(spec.electionTimeoutMs),
      '--strict-reconfig-check',
      '--logger',
      'zap',
      // zap logs to stderr, and stderr goes to the log file: Go panics land there too.
      '--log-outputs',
      'stderr',
      // A lab's users log in many times a minute: etcd checks each password with bcrypt, and its
      // default cost (10) takes ~65 ms of CPU a login; 4, the lowest etcd takes, ~5 ms. Answers are alike.
      '--bcrypt-cost',
      '4',
      ...(spec.tls
        ? ['--cert-file', spec.tls.certFile, '--key-file', spec.tls.keyFile, '--trusted-ca-file', spec.tls.trustedCaFile, '--client-cert-auth']
        : []),
      ...KUBEADM_FLAGS,
      ...(spec.extraArgs ?? []),
    ],
    version,
  );
}

/** ETCD_* variables are read by etcd as flags; only the command line may configure a member. */
function memberEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('ETCD_')) env[key] = value;
  }
  return env;
}

export function spawnEtcd(bin: string, spec: EtcdMemberSpec): ChildProcess {
  fs.mkdirSync(path.dirname(spec.logFile), { recursive: true });
  const logFd = fs.openSync(spec.logFile, 'a');
  try {
    const child = spawn(bin, etcdArgs(spec, etcdVersionOf(bin)), { stdio: ['ignore', logFd, logFd], env: memberEnvironment() });
    // A failed spawn (ENOENT, EACCES) is reported through 'exit' handling by the caller.
    child.on('error', () => undefined);
    return child;
  } finally {
    fs.closeSync(logFd);
  }
}

export function logTail(logFile: string, bytes = 2000): string {
  try {
    const text = fs.readFileSync(logFile, 'utf8');
    return text.slice(-bytes);
  } catch {
    return '(no log)';
  }
}
