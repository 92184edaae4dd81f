// The exec relay's membership calls: `member list` / `member remove` output parsed into the etcd3
// adapter's own shapes (their argv: exec-relay-argv.test.ts). Outputs captured from etcdctl
// 3.4.23 against a real member.
import { describe, expect, it } from 'vitest';
import { hexClusterId, hexMemberId } from '../../../../functions/adapters/etcd/member-id.ts';
import { parseMemberList, parseMemberRemove } from '../../../../functions/adapters/kube/exec-relay/exec-relay-members.ts';
import { classifyFailure } from '../../../../functions/core/common/classify.ts';
import type { EtcdFailure } from '../../../../functions/core/common/types.ts';

/** A started voting member, an unstarted one (no name, no clientURLs) and a learner, as etcdctl prints them. */
const CLUSTER_ID = '15118495548433857066';
const SELF = '13668033151171901709';
const LEARNER = '5294491554973178635';
const UNSTARTED = '6313210729741836161';
const LIST =
  `{"header":{"cluster_id":${CLUSTER_ID},"member_id":${SELF},"raft_term":2},"members":[` +
  `{"ID":${UNSTARTED},"peerURLs":["http://127.0.0.1:23802"]},` +
  `{"ID":${LEARNER},"peerURLs":["http://127.0.0.1:23803"],"isLearner":true},` +
  `{"ID":${SELF},"name":"cap-1","peerURLs":["http://127.0.0.1:23801"],"clientURLs":["http://127.0.0.1:23791"]}]}\n`;
const REMOVED =
  `{"header":{"cluster_id":${CLUSTER_ID},"member_id":${SELF},"raft_term":2},"members":[` +
  `{"ID":${SELF},"name":"cap-1","peerURLs":["http://127.0.0.1:23801"],"clientURLs":["http://127.0.0.1:23791"]}]}\n`;

const self = { id: hexMemberId(SELF), name: 'cap-1', clientUrls: ['http://127.0.0.1:23791'], peerUrls: ['http://127.0.0.1:23801'], isLearner: false };

describe('parseMemberList', () => {
  it('reads uint64 ids exactly (bare JSON numbers past 2^53), in hex as the etcd3 adapter gives them', () => {
    const list = parseMemberList(LIST, '', 0);
    expect(list).toEqual({
      clusterId: hexClusterId(CLUSTER_ID),
      members: [
        { id: hexMemberId(UNSTARTED), name: '', clientUrls: [], peerUrls: ['http://127.0.0.1:23802'], isLearner: false },
        { id: hexMemberId(LEARNER), name: '', clientUrls: [], peerUrls: ['http://127.0.0.1:23803'], isLearner: true },
        self,
      ],
    });
    // The exact ids, not the nearest doubles.
    expect(hexMemberId(SELF)).toBe(BigInt(SELF).toString(16));
    expect(hexMemberId(LEARNER)).toBe('4979d004907b5b0b');
    expect(hexClusterId(CLUSTER_ID)).toBe(BigInt(CLUSTER_ID).toString(16));
  });

  it('a header without cluster_id is cluster 0, as Go omits zero values', () => {
    expect(parseMemberList('{"header":{},"members":[]}', '', 0)).toEqual({ clusterId: hexClusterId('0'), members: [] });
  });

  it('takes isLearner as the quoted text some encoders give', () => {
    const list = parseMemberList(`{"header":{"cluster_id":1},"members":[{"ID":7,"peerURLs":[],"isLearner":"true"}]}`, '', 0);
    expect(list).toMatchObject({ members: [{ id: '7', isLearner: true }] });
  });

  it('says why it cannot read the output, without guessing', () => {
    const cases: [string, string][] = [
      ['not json', 'unreadable etcdctl member list output: '],
      ['[]', 'expected a header and members'],
      ['{"header":{"cluster_id":1}}', 'expected a header and members'],
      ['{"members":[]}', 'expected a header and members'],
      ['{"header":{"cluster_id":-1},"members":[]}', 'cluster_id is not an unsigned integer'],
      ['{"header":{},"members":[{"ID":"x1","peerURLs":[]}]}', 'ID is not an unsigned integer'],
      ['{"header":{},"members":[{"ID":1,"name":true,"peerURLs":[]}]}', 'name is not a string'],
      ['{"header":{},"members":[{"ID":1,"peerURLs":"http://a:2380"}]}', 'peerURLs is not a list of URLs'],
      ['{"header":{},"members":[{"ID":1,"clientURLs":[null]}]}', 'clientURLs is not a list of URLs'],
      ['{"header":{},"members":[7]}', 'not a member: "7"'],
    ];
    for (const [stdout, says] of cases) {
      const parsed = parseMemberList(stdout, '', 0);
      expect(parsed, stdout).toMatchObject({ kind: 'other', message: expect.stringContaining(says) });
      expect((parsed as EtcdFailure).message.startsWith('unreadable etcdctl member list output: '), stdout).toBe(true);
    }
  });
});

describe('parseMemberRemove', () => {
  it('returns the members left', () => {
    expect(parseMemberRemove(REMOVED, '', 0)).toEqual([self]);
  });

  it('names its own call when the output is unreadable', () => {
    expect(parseMemberRemove('Member 4979d004907b5b0b removed from cluster d1cf6d6da5a6a02a\n', '', 0)).toMatchObject({
      kind: 'other',
      message: expect.stringMatching(/^unreadable etcdctl member remove output: /),
    });
  });
});

const warn = (error: string): string =>
  JSON.stringify({
    level: 'warn',
    ts: '2026-11-30T17:12:24.311Z',
    caller: 'clientv3/retry_interceptor.go:62',
    msg: 'retrying of unary invoker failed',
    target: 'endpoint://client-3d71f62d/127.0.0.1:23791',
    attempt: 0,
    error,
  });

describe('membership failures, read from stderr whatever stdout holds', () => {
  const cases: { name: string; stderr: string; exitCode: number | null; expected: EtcdFailure; reason: string }[] = [
    {
      name: 'member not found (removed already)',
      stderr: `${warn('rpc error: code = NotFound desc = etcdserver: member not found')}\nError: etcdserver: member not found\n`,
      exitCode: 1,
      expected: { kind: 'other', grpcCode: 5, message: 'etcdserver: member not found' },
      reason: 'MEMBER_NOT_FOUND',
    },
    {
      name: 'not enough started members',
      stderr: `${warn('rpc error: code = Unknown desc = etcdserver: re-configuration failed due to not enough started members')}\nError: etcdserver: re-configuration failed due to not enough started members\n`,
      exitCode: 1,
      expected: { kind: 'other', grpcCode: 2, message: 'etcdserver: re-configuration failed due to not enough started members' },
      reason: 'NOT_ENOUGH_STARTED_MEMBERS',
    },
    {
      name: 'unhealthy cluster',
      stderr: `${warn('rpc error: code = Unavailable desc = etcdserver: unhealthy cluster')}\nError: etcdserver: unhealthy cluster\n`,
      exitCode: 1,
      expected: { kind: 'other', grpcCode: 14, message: 'etcdserver: unhealthy cluster' },
      reason: 'ETCD_TRANSIENT',
    },
    {
      name: 'an id etcdctl cannot parse',
      stderr: 'Error: bad member ID arg (strconv.ParseUint: parsing "zz": invalid syntax), expecting ID in Hex\n',
      exitCode: 128,
      expected: { kind: 'other', message: 'bad member ID arg (strconv.ParseUint: parsing "zz": invalid syntax), expecting ID in Hex' },
      reason: 'UNKNOWN_ERROR',
    },
    {
      name: 'the member is not reachable',
      stderr: `${warn('rpc error: code = DeadlineExceeded desc = latest balancer error: connection error: desc = "transport: Error while dialing dial tcp 10.0.0.12:2379: connect: connection refused"')}\nError: context deadline exceeded\n`,
      exitCode: 1,
      expected: {
        kind: 'refused',
        grpcCode: 14,
        message: 'connection error: desc = "transport: Error while dialing dial tcp 10.0.0.12:2379: connect: connection refused"',
      },
      reason: 'PATH_REFUSED',
    },
    {
      name: 'etcdctl killed by a signal',
      stderr: '',
      exitCode: null,
      expected: { kind: 'other', message: 'etcdctl was killed by a signal' },
      reason: 'UNKNOWN_ERROR',
    },
  ];

  it.each(cases)('$name', ({ stderr, exitCode, expected, reason }) => {
    expect(parseMemberList(LIST, stderr, exitCode)).toEqual(expected);
    expect(parseMemberRemove('', stderr, exitCode)).toEqual(expected);
    expect(classifyFailure(expected).reason).toBe(reason);
  });
});
