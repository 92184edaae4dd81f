// Outputs captured from etcdctl 3.4.23 against lab members; the adapter failures beside them are
// what the etcd3 adapter reported for the same member in the same state.
import { describe, expect, it } from 'vitest';
import { hexMemberId } from '../../../../functions/adapters/etcd/member-id.ts';
import { isEtcdFailure, parseEndpointStatus, parseMoveLeader } from '../../../../functions/adapters/kube/exec-relay/exec-relay-etcdctl.ts';
import { classifyFailure } from '../../../../functions/core/common/classify.ts';
import type { EtcdFailure } from '../../../../functions/core/common/types.ts';

const warn = (error: string): string =>
  JSON.stringify({
    level: 'warn',
    ts: '2026-11-30T16:12:50.617Z',
    caller: 'clientv3/retry_interceptor.go:62',
    msg: 'retrying of unary invoker failed',
    target: 'passthrough:///http://127.0.0.1:33469',
    attempt: 0,
    error,
  });
const statusFailed = 'Failed to get the status of endpoint http://127.0.0.1:33469 (context deadline exceeded)';

const HEALTHY =
  '[{"Endpoint":"http://127.0.0.1:33469","Status":{"header":{"cluster_id":233131035712670909,"member_id":16777275027825080183,"revision":1,"raft_term":2},"version":"3.4.23","dbSize":20480,"leader":1192898621271198699,"raftIndex":8,"raftTerm":2,"raftAppliedIndex":8,"dbSizeInUse":16384}}]\n';

describe('parseEndpointStatus', () => {
  it('reads uint64 ids exactly and carries them in hex, as the etcd3 adapter does', () => {
    expect(parseEndpointStatus(HEALTHY, '', 0)).toEqual({
      leaderId: hexMemberId('1192898621271198699'),
      raftTerm: 2,
      raftIndex: 8,
      raftAppliedIndex: 8,
      alarms: [],
      errors: [],
      version: '3.4.23',
      dbSize: 20480,
      dbSizeInUse: 16384,
      isLearner: false,
      revision: 1,
      clusterId: '33c3f7119c5ccbd',
    });
  });

  it('reads a missing leader (Go omits zero) as no leader, and attributes alarms to the member they name', () => {
    const out =
      '[{"Endpoint":"x","Status":{"header":{"cluster_id":1,"member_id":16777275027825080183},"version":"3.4.23","dbSize":1,"raftTerm":5,' +
      '"errors":["memberID:16777275027825080183 alarm:NOSPACE","memberID:7 alarm:CORRUPT","etcdserver: no leader"],"isLearner":true}}]';
    expect(parseEndpointStatus(out, '', 0)).toMatchObject({
      leaderId: '0',
      alarms: ['NOSPACE'],
      errors: ['etcdserver: no leader'],
      isLearner: true,
      raftIndex: 0,
    });
  });

  it('says so when the output is not one endpoint’s status', () => {
    for (const out of ['[]', 'not json', '[{"Endpoint":"x"}]', '[{"Endpoint":"x","Status":{"leader":"abc"}}]']) {
      expect(parseEndpointStatus(out, '', 0)).toMatchObject({ kind: 'other', message: expect.stringContaining('unreadable etcdctl') });
    }
  });
});

interface Case {
  name: string;
  stderr: string;
  exitCode: number | null;
  expected: EtcdFailure;
  /** The etcd3 adapter's failure for the same member and state. */
  adapter?: EtcdFailure;
}

const cases: Case[] = [
  {
    name: 'cut proxy (connection refused)',
    stderr: `${warn('rpc error: code = DeadlineExceeded desc = latest balancer error: connection error: desc = "transport: Error while dialing dial tcp 127.0.0.1:33469: connect: connection refused"')}\n${statusFailed}\n`,
    exitCode: 1,
    expected: {
      kind: 'refused',
      grpcCode: 14,
      message: 'connection error: desc = "transport: Error while dialing dial tcp 127.0.0.1:33469: connect: connection refused"',
    },
    adapter: {
      kind: 'refused',
      grpcCode: 14,
      message: 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:33469. Resolution note: ',
    },
  },
  {
    name: 'killed member behind its proxy (connection closed)',
    stderr: `${warn('rpc error: code = DeadlineExceeded desc = latest balancer error: connection closed')}\n${statusFailed}\n`,
    exitCode: 1,
    expected: { kind: 'refused', grpcCode: 14, message: 'connection closed' },
    adapter: {
      kind: 'refused',
      grpcCode: 14,
      message: 'No connection established. Last error: Failed to connect (2026-11-30T16:12:53.506Z). Resolution note: ',
    },
  },
  {
    name: 'blackhole',
    stderr: `${warn('rpc error: code = DeadlineExceeded desc = context deadline exceeded')}\n${statusFailed}\n`,
    exitCode: 1,
    expected: { kind: 'timeout', grpcCode: 4, message: 'context deadline exceeded' },
    adapter: { kind: 'timeout', grpcCode: 4, message: 'Deadline exceeded after 0.700s,Waiting for LB pick' },
  },
  {
    name: 'a timeout with no warning line',
    stderr: 'Error: context deadline exceeded\n',
    exitCode: 1,
    expected: { kind: 'timeout', grpcCode: 4, message: 'context deadline exceeded' },
  },
  {
    name: 'move-leader aimed at a follower',
    stderr: 'Error: no leader endpoint given at [http://127.0.0.1:33469]\n',
    exitCode: 128,
    expected: { kind: 'other', grpcCode: 9, message: 'etcdserver: not leader' },
    adapter: { kind: 'other', grpcCode: 9, message: 'etcdserver: not leader' },
  },
  {
    name: 'bad leader transferee',
    stderr: `${warn('rpc error: code = FailedPrecondition desc = etcdserver: bad leader transferee')}\nError: etcdserver: bad leader transferee\n`,
    exitCode: 1,
    expected: { kind: 'other', grpcCode: 9, message: 'etcdserver: bad leader transferee' },
    adapter: { kind: 'other', grpcCode: 9, message: 'etcdserver: bad leader transferee' },
  },
  {
    name: 'etcd’s own request timeout',
    stderr: `${warn('rpc error: code = Unavailable desc = etcdserver: request timed out')}\nError: etcdserver: request timed out\n`,
    exitCode: 1,
    expected: { kind: 'other', grpcCode: 14, message: 'etcdserver: request timed out' },
  },
  {
    name: 'leader transfer too slow',
    stderr: `${warn('rpc error: code = Unavailable desc = etcdserver: leader transfer took too long')}\nError: etcdserver: leader transfer took too long\n`,
    exitCode: 1,
    expected: { kind: 'other', grpcCode: 14, message: 'etcdserver: leader transfer took too long' },
  },
  {
    name: 'permission denied',
    stderr: `${warn('rpc error: code = PermissionDenied desc = etcdserver: permission denied')}\nError: etcdserver: permission denied\n`,
    exitCode: 1,
    expected: { kind: 'auth', grpcCode: 7, message: 'etcdserver: permission denied' },
  },
  {
    name: 'TLS to a plain member',
    stderr: `${warn('rpc error: code = DeadlineExceeded desc = latest balancer error: connection error: desc = "transport: authentication handshake failed: EOF"')}\n${statusFailed}\n`,
    exitCode: 1,
    expected: { kind: 'tls', grpcCode: 14, message: 'connection error: desc = "transport: authentication handshake failed: EOF"' },
  },
  {
    name: 'unknown CA',
    stderr: `${warn('rpc error: code = DeadlineExceeded desc = latest balancer error: connection error: desc = "transport: authentication handshake failed: x509: certificate signed by unknown authority"')}\n${statusFailed}\n`,
    exitCode: 1,
    expected: {
      kind: 'tls',
      grpcCode: 14,
      message: 'connection error: desc = "transport: authentication handshake failed: x509: certificate signed by unknown authority"',
    },
  },
  {
    name: 'certificate file missing in the pod',
    stderr: 'Error: open /etc/kubernetes/pki/etcd/healthcheck-client.crt: no such file or directory\n',
    exitCode: 128,
    expected: { kind: 'tls', message: 'open /etc/kubernetes/pki/etcd/healthcheck-client.crt: no such file or directory' },
  },
  {
    name: 'a member id etcdctl cannot parse',
    stderr: 'Error: strconv.ParseUint: parsing "zz": invalid syntax\n',
    exitCode: 128,
    expected: { kind: 'other', message: 'strconv.ParseUint: parsing "zz": invalid syntax' },
  },
  {
    name: 'etcdctl killed by a signal',
    stderr: '',
    exitCode: null,
    expected: { kind: 'other', message: 'etcdctl was killed by a signal' },
  },
];

describe('etcdctl failures', () => {
  it.each(cases)('$name', ({ stderr, exitCode, expected, adapter }) => {
    const status = parseEndpointStatus('[]\n', stderr, exitCode);
    const moved = parseMoveLeader('', stderr, exitCode);
    expect(status).toEqual(expected);
    expect(moved).toEqual(expected);
    if (adapter) {
      expect(isEtcdFailure(status) && status.kind).toBe(adapter.kind);
      expect(classifyFailure(expected).reason).toBe(classifyFailure(adapter).reason);
    }
  });

  it('classifies as the table expects', () => {
    const reason = (name: string): string => classifyFailure(cases.find((c) => c.name === name)!.expected).reason;
    expect(reason('cut proxy (connection refused)')).toBe('PATH_REFUSED');
    expect(reason('blackhole')).toBe('PATH_TIMEOUT');
    expect(reason('move-leader aimed at a follower')).toBe('LEADER_CHANGED');
    expect(reason('bad leader transferee')).toBe('TRANSFEREE_UNFIT');
    expect(reason('etcd’s own request timeout')).toBe('ETCD_TRANSIENT');
    expect(reason('permission denied')).toBe('AUTH_FAILED');
    expect(reason('certificate file missing in the pod')).toBe('TLS_FAILED');
  });
});

describe('parseMoveLeader', () => {
  it('takes exit status 0 as moved, whatever the warnings', () => {
    expect(parseMoveLeader('{}\n', warn('rpc error: code = FailedPrecondition desc = etcdserver: authentication is not enabled'), 0)).toEqual({ moved: true });
  });
});
