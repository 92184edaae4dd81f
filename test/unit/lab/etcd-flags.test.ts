// etcd's renamed flags: the lab runs each etcd with the spelling its version reads, whichever
// spelling a test wrote (etcd 3.6 renamed the `--experimental-…` flags and made the switches
// feature gates; 3.4 and 3.5 know only the old names).
import { describe, expect, it } from 'vitest';
import { etcdArgs, type EtcdMemberSpec } from '../../../infra/lab/etcd-process.ts';
import { GATED_IN_3_6, RENAMED_IN_3_6, parseEtcdVersion, spellEtcdFlags, type EtcdVersion } from '../../../infra/lab/etcd-flags.ts';

const V34: EtcdVersion = { major: 3, minor: 4, patch: 23 };
const V35: EtcdVersion = { major: 3, minor: 5, patch: 16 };
const V36: EtcdVersion = { major: 3, minor: 6, patch: 5 };

const spec = (extraArgs?: string[]): EtcdMemberSpec => ({
  name: 'etcd1',
  clientPort: 2379,
  advertiseClientUrl: 'http://127.0.0.1:3379',
  peerUrl: 'http://127.0.0.1:2380',
  initialCluster: 'etcd1=http://127.0.0.1:2380',
  clusterState: 'new',
  token: 't',
  heartbeatMs: 50,
  electionTimeoutMs: 500,
  dataDir: '/tmp/d',
  logFile: '/tmp/l',
  ...(extraArgs ? { extraArgs } : {}),
});

describe('etcd --version', () => {
  it.each([
    ['etcd Version: 3.4.23\nGit SHA: Not provided\n', V34],
    ['etcd Version: 3.5.16\nGit SHA: Not provided (use ./build instead of go build)\nGo Version: go1.24.0\n', V35],
    ['etcd Version: 3.6.5\n', V36],
  ])('reads %j', (output, version) => expect(parseEtcdVersion(output)).toEqual(version));

  it('says nothing for output that names no version', () => {
    expect(parseEtcdVersion('etcdctl version: 3.5.16\nAPI version: 3.5\n')).toBeUndefined();
  });
});

describe('spelling the renamed flags', () => {
  it.each([
    ['--experimental-watch-progress-notify-interval=5s', V35, ['--experimental-watch-progress-notify-interval=5s']],
    ['--experimental-watch-progress-notify-interval=5s', V36, ['--watch-progress-notify-interval=5s']],
    ['--watch-progress-notify-interval=5s', V34, ['--experimental-watch-progress-notify-interval=5s']],
    ['--watch-progress-notify-interval=5s', V36, ['--watch-progress-notify-interval=5s']],
    ['--experimental-initial-corrupt-check=true', V35, ['--experimental-initial-corrupt-check=true']],
    ['--experimental-initial-corrupt-check=true', V36, ['--feature-gates=InitialCorruptCheck=true']],
    ['--experimental-initial-corrupt-check', V36, ['--feature-gates=InitialCorruptCheck=true']],
    ['--feature-gates=InitialCorruptCheck=true', V35, ['--experimental-initial-corrupt-check=true']],
    ['--feature-gates=InitialCorruptCheck=true', V36, ['--feature-gates=InitialCorruptCheck=true']],
  ] as const)('%s on %j', (flag, version, expected) => expect(spellEtcdFlags([flag], version)).toEqual(expected));

  it('keeps a value given as the next argument, and every flag it does not know', () => {
    const args = ['--experimental-compaction-batch-limit', '1000', '--quota-backend-bytes', '1048576', '--strict-reconfig-check', '--logger', 'zap'];
    expect(spellEtcdFlags(args, V36)).toEqual([
      '--compaction-batch-limit',
      '1000',
      '--quota-backend-bytes',
      '1048576',
      '--strict-reconfig-check',
      '--logger',
      'zap',
    ]);
    expect(spellEtcdFlags(args, V35)).toEqual(args);
    expect(spellEtcdFlags(spellEtcdFlags(args, V36), V35)).toEqual(args);
  });

  it('on 3.6 folds every switch into one --feature-gates, where the first of them stood', () => {
    const args = [
      '--experimental-initial-corrupt-check=true',
      '--name',
      'a',
      '--experimental-compact-hash-check-enabled',
      '--feature-gates=StopGRPCServiceOnDefrag=false',
    ];
    expect(spellEtcdFlags(args, V36)).toEqual(['--feature-gates=InitialCorruptCheck=true,CompactHashCheck=true,StopGRPCServiceOnDefrag=false', '--name', 'a']);
    expect(spellEtcdFlags(['--feature-gates=InitialCorruptCheck=true,CompactHashCheck=false'], V34)).toEqual([
      '--experimental-initial-corrupt-check=true',
      '--experimental-compact-hash-check-enabled=false',
    ]);
  });

  it('every renamed flag and every gate goes both ways', () => {
    for (const [old, renamed] of Object.entries(RENAMED_IN_3_6)) {
      expect(spellEtcdFlags([`--${old}=1`], V36)).toEqual([`--${renamed}=1`]);
      expect(spellEtcdFlags([`--${renamed}=1`], V35)).toEqual([`--${old}=1`]);
    }
    for (const [flag, gate] of Object.entries(GATED_IN_3_6)) {
      expect(spellEtcdFlags([`--${flag}=true`], V36)).toEqual([`--feature-gates=${gate}=true`]);
      expect(spellEtcdFlags([`--feature-gates=${gate}=false`], V35)).toEqual([`--${flag}=false`]);
    }
  });

  it('refuses, naming the flag, a gate 3.5 has no flag for and a switch that is not true or false', () => {
    expect(() => spellEtcdFlags(['--feature-gates=SetMemberLocalAddr=true'], V35)).toThrow(
      '--feature-gates: SetMemberLocalAddr is a gate of etcd 3.6 and later, and etcd 3.5 has no flag for it',
    );
    expect(() => spellEtcdFlags(['--feature-gates=InitialCorruptCheck'], V36)).toThrow('--feature-gates: "InitialCorruptCheck" is not Gate=true or Gate=false');
    expect(() => spellEtcdFlags(['--experimental-initial-corrupt-check=yes'], V36)).toThrow('--experimental-initial-corrupt-check: "yes" is not true or false');
  });
});

describe('the lab member command line', () => {
  it("runs etcd with kubeadm's watch progress notification, spelled for the version", () => {
    expect(etcdArgs(spec(), V35)).toContain('--experimental-watch-progress-notify-interval=5s');
    expect(etcdArgs(spec(), V36)).toContain('--watch-progress-notify-interval=5s');
    expect(etcdArgs(spec(), V36).filter((arg) => arg.startsWith('--experimental-'))).toEqual([]);
  });

  it("spells a test's extra flags for the version too, keeping the lab's own as they are", () => {
    const args = etcdArgs(spec(['--experimental-initial-corrupt-check=true', '--quota-backend-bytes', '1048576']), V36);
    expect(args.slice(-3)).toEqual(['--feature-gates=InitialCorruptCheck=true', '--quota-backend-bytes', '1048576']);
    expect(args.slice(0, 4)).toEqual(['--name', 'etcd1', '--data-dir', '/tmp/d']);
    expect(etcdArgs(spec(['--feature-gates=InitialCorruptCheck=true']), V34).at(-1)).toBe('--experimental-initial-corrupt-check=true');
  });

  it('listens for peers on the real port and advertises the peer fault proxy, when the member has one', () => {
    const args = etcdArgs({ ...spec(), peerUrl: 'http://127.0.0.1:3380', listenPeerUrl: 'http://127.0.0.1:2380' }, V35);
    expect(args[args.indexOf('--listen-peer-urls') + 1]).toBe('http://127.0.0.1:2380');
    expect(args[args.indexOf('--initial-advertise-peer-urls') + 1]).toBe('http://127.0.0.1:3380');
    const plain = etcdArgs(spec(), V35);
    expect(plain[plain.indexOf('--listen-peer-urls') + 1]).toBe('http://127.0.0.1:2380');
  });
});
