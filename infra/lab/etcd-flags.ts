// etcd's renamed flags, spelled for the etcd that runs them. etcd 3.6 renamed most
// `--experimental-…` flags and turned the experimental switches into feature gates; 3.6 still takes
// the old names (with a deprecation warning), 3.7 drops them, and 3.4 and 3.5 know only the old
// ones. Either spelling goes in; what comes out is the one the given version reads.
// Source: etcd-io/etcd server/etcdmain/config.go `deprecatedFlags` and server/features/etcd_features.go
// `ExperimentalFlagToFeatureMap` (v3.6).
import { execFileSync } from 'node:child_process';

/** An etcd release as `etcd --version` names it. */
export interface EtcdVersion {
  major: number;
  minor: number;
  patch: number;
}

/** Flags 3.6 renamed, keeping the value: the old name → the new one. */
export const RENAMED_IN_3_6: Readonly<Record<string, string>> = {
  'experimental-compact-hash-check-time': 'compact-hash-check-time',
  'experimental-corrupt-check-time': 'corrupt-check-time',
  'experimental-compaction-batch-limit': 'compaction-batch-limit',
  'experimental-watch-progress-notify-interval': 'watch-progress-notify-interval',
  'experimental-warning-apply-duration': 'warning-apply-duration',
  'experimental-warning-unary-request-duration': 'warning-unary-request-duration',
  'experimental-bootstrap-defrag-threshold-megabytes': 'bootstrap-defrag-threshold-megabytes',
  'experimental-max-learners': 'max-learners',
  'experimental-memory-mlock': 'memory-mlock',
  'experimental-snapshot-catchup-entries': 'snapshot-catchup-entries',
  'experimental-compaction-sleep-interval': 'compaction-sleep-interval',
  'experimental-downgrade-check-time': 'downgrade-check-time',
  'experimental-peer-skip-client-san-verification': 'peer-skip-client-san-verification',
  'experimental-enable-distributed-tracing': 'enable-distributed-tracing',
  'experimental-distributed-tracing-address': 'distributed-tracing-address',
  'experimental-distributed-tracing-service-name': 'distributed-tracing-service-name',
  'experimental-distributed-tracing-instance-id': 'distributed-tracing-instance-id',
  'experimental-distributed-tracing-sampling-rate': 'distributed-tracing-sampling-rate',
};

/** Boolean flags 3.6 turned into feature gates: the old flag → the gate (`--feature-gates=Gate=true`). */
export const GATED_IN_3_6: Readonly<Record<string, string>> = {
  'experimental-initial-corrupt-check': 'InitialCorruptCheck',
  'experimental-compact-hash-check-enabled': 'CompactHashCheck',
  'experimental-txn-mode-write-with-shared-buffer': 'TxnModeWriteWithSharedBuffer',
  'experimental-stop-grpc-service-on-defrag': 'StopGRPCServiceOnDefrag',
  'experimental-enable-lease-checkpoint': 'LeaseCheckpoint',
  'experimental-enable-lease-checkpoint-persist': 'LeaseCheckpointPersist',
};

const invert = (table: Readonly<Record<string, string>>): Record<string, string> => Object.fromEntries(Object.entries(table).map(([from, to]) => [to, from]));
const OLD_NAME_OF = invert(RENAMED_IN_3_6);
const FLAG_OF_GATE = invert(GATED_IN_3_6);

/** The version on the first line of `etcd --version` ("etcd Version: 3.5.16"); undefined when it is not there. */
export function parseEtcdVersion(output: string): EtcdVersion | undefined {
  const match = /^etcd Version: (\d+)\.(\d+)\.(\d+)/m.exec(output);
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

/** 3.6 and later read the new names and feature gates. */
export const readsNewNames = (version: EtcdVersion): boolean => version.major > 3 || (version.major === 3 && version.minor >= 6);

/** One flag token: `--name=value`, `--name` alone, or `--name` with its value as the next token. */
interface Flag {
  name: string;
  value?: string;
  /** The value was glued on with `=` (a bool flag's must be: Go reads `--b false` as `--b` and an argument). */
  glued: boolean;
}

function readFlags(args: readonly string[]): (Flag | string)[] {
  const out: (Flag | string)[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i]!;
    const match = /^--?([^=]+)(?:=(.*))?$/s.exec(token);
    if (!match) {
      out.push(token);
      continue;
    }
    const [, name, glued] = match as unknown as [string, string, string | undefined];
    if (glued !== undefined) out.push({ name, value: glued, glued: true });
    else if (!(name in GATED_IN_3_6) && i + 1 < args.length && !args[i + 1]!.startsWith('-')) out.push({ name, value: args[++i]!, glued: false });
    else out.push({ name, glued: false });
  }
  return out;
}

const writeFlag = ({ name, value, glued }: Flag): string[] => (value === undefined ? [`--${name}`] : glued ? [`--${name}=${value}`] : [`--${name}`, value]);

/** `A=true,B=false` as a feature-gate map, in order. */
function readGates(value: string | undefined, flag: string): [string, string][] {
  return (value ?? '')
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const [gate, setting, ...rest] = pair.split('=');
      if (!gate || (setting !== 'true' && setting !== 'false') || rest.length > 0)
        throw new Error(`--${flag}: ${JSON.stringify(pair)} is not Gate=true or Gate=false`);
      return [gate, setting];
    });
}

/**
 * The etcd command line `args` (either spelling) as `version` reads it: on 3.6 and later the new
 * names, the experimental switches folded into one `--feature-gates`; before 3.6 the
 * `--experimental-…` names, a feature gate written back as its flag. A gate with no flag before 3.6
 * is an error naming it, not a flag etcd would refuse at start.
 */
export function spellEtcdFlags(args: readonly string[], version: EtcdVersion): string[] {
  const modern = readsNewNames(version);
  // One gate set twice (both spellings) keeps the last setting, as etcd would read a repeated flag.
  const gates = new Map<string, string>();
  const out: (string[] | 'gates')[] = [];
  for (const token of readFlags(args)) {
    if (typeof token === 'string') {
      out.push([token]);
      continue;
    }
    if (token.name === 'feature-gates') {
      const pairs = readGates(token.value, token.name);
      if (modern) {
        if (!out.includes('gates')) out.push('gates');
        for (const [gate, setting] of pairs) gates.set(gate, setting);
        continue;
      }
      for (const [gate, setting] of pairs) {
        const flag = FLAG_OF_GATE[gate];
        if (!flag) throw new Error(`--feature-gates: ${gate} is a gate of etcd 3.6 and later, and etcd ${version.major}.${version.minor} has no flag for it`);
        out.push([`--${flag}=${setting}`]);
      }
      continue;
    }
    const gate = GATED_IN_3_6[token.name];
    if (gate && modern) {
      const setting = token.value ?? 'true';
      if (setting !== 'true' && setting !== 'false') throw new Error(`--${token.name}: ${JSON.stringify(setting)} is not true or false`);
      if (!out.includes('gates')) out.push('gates');
      gates.set(gate, setting);
      continue;
    }
    const name = modern ? (RENAMED_IN_3_6[token.name] ?? token.name) : (OLD_NAME_OF[token.name] ?? token.name);
    out.push(writeFlag({ ...token, name }));
  }
  return out.flatMap((part) => (part === 'gates' ? [`--feature-gates=${[...gates].map(([gate, setting]) => `${gate}=${setting}`).join(',')}`] : part));
}

const versions = new Map<string, EtcdVersion>();

/** What `bin --version` says, asked once per binary; an error naming the binary when it says no version. */
export function etcdVersionOf(bin: string): EtcdVersion {
  let version = versions.get(bin);
  if (!version) {
    const output = execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000, env: { PATH: process.env.PATH ?? '' } });
    version = parseEtcdVersion(output);
    if (!version) throw new Error(`${bin} --version named no etcd version: ${JSON.stringify(output.split('\n')[0])}`);
    versions.set(bin, version);
  }
  return version;
}

/**
 * The flags kubeadm gives every etcd it runs beyond the lab's own (cmd/kubeadm/app/phases/etcd/local.go
 * getEtcdCommand), in 3.5's spelling: a watch progress notification every 5 s. kubeadm also turns
 * on the initial corruption check; the lab leaves it off: a member started while a peer is frozen
 * (SIGSTOP) would wait out etcd's request timeout on that peer's HashKV before it serves
 * (server/etcdserver/corrupt.go getPeerHashKVs, run by embed.StartEtcd).
 */
export const KUBEADM_FLAGS: readonly string[] = ['--experimental-watch-progress-notify-interval=5s'];
