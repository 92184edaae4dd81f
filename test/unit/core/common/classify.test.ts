import { describe, it, expect } from 'vitest';
import { classifyFailure } from '../../../../functions/core/common/classify.ts';
import { classificationTable } from '../../../../functions/core/common/classification-table.ts';
import type { EtcdFailure } from '../../../../functions/core/common/types.ts';

type Row = { failure: EtcdFailure; reason: string; class: string };
const etcd = (message: string, grpcCode = 2): EtcdFailure => ({ kind: 'other', grpcCode, message });

// Real etcd 3.4 strings, sent as gRPC Unknown (2) or their own codes.
const rows: Row[] = [
  { failure: etcd('etcdserver: not leader', 9), reason: 'LEADER_CHANGED', class: 'retry-now' },
  { failure: etcd('etcdserver: bad leader transferee', 9), reason: 'TRANSFEREE_UNFIT', class: 'next-candidate' },
  { failure: etcd('etcdserver: leader transfer took too long'), reason: 'LEADER_TRANSFER_TIMEOUT', class: 'next-candidate' },
  { failure: etcd('etcdserver: no leader', 14), reason: 'ETCD_TRANSIENT', class: 'back-off' },
  { failure: etcd('etcdserver: leader changed', 14), reason: 'ETCD_TRANSIENT', class: 'back-off' },
  { failure: etcd('etcdserver: unhealthy cluster', 14), reason: 'ETCD_TRANSIENT', class: 'back-off' },
  { failure: etcd('etcdserver: request timed out', 14), reason: 'ETCD_TRANSIENT', class: 'back-off' },
  {
    failure: etcd('etcdserver: request timed out, possibly due to previous leader failure', 14),
    reason: 'ETCD_TRANSIENT',
    class: 'back-off',
  },
  { failure: etcd('etcdserver: server stopped', 14), reason: 'ETCD_TRANSIENT', class: 'back-off' },
  {
    failure: etcd('etcdserver: re-configuration failed due to not enough started members', 9),
    reason: 'NOT_ENOUGH_STARTED_MEMBERS',
    class: 'block',
  },
  { failure: etcd('not enough started members'), reason: 'NOT_ENOUGH_STARTED_MEMBERS', class: 'block' },
  { failure: etcd('etcdserver: member not found', 5), reason: 'MEMBER_NOT_FOUND', class: 'decide' },
  // With a NOSPACE alarm every member refuses puts, txns and lease grants so.
  { failure: etcd('etcdserver: mvcc: database space exceeded', 8), reason: 'ETCD_NO_SPACE', class: 'block' },
  {
    // The exec diagnosis of a relay pod whose image lacks the etcdctl it was told to run.
    failure: {
      kind: 'other',
      message:
        'exec in kube-system/etcd-cp-3 failed: Internal error occurred: OCI runtime exec failed: exec failed: unable to start container process: exec: "/usr/local/bin/etcdctl": stat /usr/local/bin/etcdctl: no such file or directory: unknown (/usr/local/bin/etcdctl is not in the container\'s image)',
    },
    reason: 'RELAY_BINARY_MISSING',
    class: 'next-path',
  },
  { failure: { kind: 'refused', message: 'connect ECONNREFUSED 127.0.0.1:4001' }, reason: 'PATH_REFUSED', class: 'next-path' },
  { failure: { kind: 'other', grpcCode: 14, message: 'No connection established' }, reason: 'PATH_REFUSED', class: 'next-path' },
  { failure: { kind: 'timeout', message: 'call timed out after 2000 ms' }, reason: 'PATH_TIMEOUT', class: 'next-path' },
  { failure: { kind: 'other', grpcCode: 4, message: 'Deadline exceeded' }, reason: 'PATH_TIMEOUT', class: 'next-path' },
  { failure: { kind: 'other', message: 'context deadline exceeded' }, reason: 'PATH_TIMEOUT', class: 'next-path' },
  { failure: { kind: 'tls', grpcCode: 14, message: 'unable to verify the first certificate' }, reason: 'TLS_FAILED', class: 'next-path' },
  { failure: { kind: 'auth', message: 'rejected' }, reason: 'AUTH_FAILED', class: 'next-path' },
  { failure: { kind: 'other', grpcCode: 16, message: 'unauthenticated' }, reason: 'AUTH_FAILED', class: 'next-path' },
  { failure: { kind: 'other', grpcCode: 7, message: 'forbidden' }, reason: 'AUTH_FAILED', class: 'next-path' },
  { failure: etcd('etcdserver: permission denied', 7), reason: 'AUTH_FAILED', class: 'next-path' },
  { failure: etcd('etcdserver: invalid auth token', 16), reason: 'AUTH_FAILED', class: 'next-path' },
  { failure: etcd('etcdserver: authentication failed, invalid user ID or password', 3), reason: 'AUTH_FAILED', class: 'next-path' },
  { failure: etcd('etcdserver: user name is empty', 3), reason: 'AUTH_FAILED', class: 'next-path' },
  { failure: etcd('mvcc: something unheard of'), reason: 'UNKNOWN_ERROR', class: 'back-off' },
  { failure: { kind: 'other', message: '' }, reason: 'UNKNOWN_ERROR', class: 'back-off' },
];

describe('classifyFailure', () => {
  it.each(rows)('$failure.message ($failure.kind, $failure.grpcCode) → $reason / $class', (row) => {
    const got = classifyFailure(row.failure);
    expect(got.reason).toBe(row.reason);
    expect(got.class).toBe(row.class);
    expect(got.next.length).toBeGreaterThan(0);
  });

  it('has a sample for every row of the table', () => {
    const covered = new Set(rows.map((r) => classifyFailure(r.failure)));
    expect(classificationTable.filter((row) => !covered.has(row))).toEqual([]);
  });

  it.each([
    // etcd talking beats the transport's idea of the failure.
    { failure: { kind: 'timeout', grpcCode: 4, message: 'etcdserver: request timed out' }, reason: 'ETCD_TRANSIENT' },
    { failure: { kind: 'refused', grpcCode: 14, message: 'etcdserver: not leader' }, reason: 'LEADER_CHANGED' },
    { failure: { kind: 'timeout', message: 'etcdserver: permission denied' }, reason: 'AUTH_FAILED' },
    // The transport's kind beats a generic gRPC code: grpc-js reports TLS failures as UNAVAILABLE.
    { failure: { kind: 'tls', grpcCode: 14, message: 'handshake failed' }, reason: 'TLS_FAILED' },
    { failure: { kind: 'timeout', grpcCode: 14, message: 'no answer' }, reason: 'PATH_TIMEOUT' },
    // Case does not matter.
    { failure: { kind: 'other', message: 'ETCDSERVER: Bad Leader Transferee' }, reason: 'TRANSFEREE_UNFIT' },
  ] as { failure: EtcdFailure; reason: string }[])('precedence: $failure.message ($failure.kind) → $reason', ({ failure, reason }) => {
    expect(classifyFailure(failure).reason).toBe(reason);
  });

  it('sorts every row into a category that fits its class', () => {
    for (const row of classificationTable) {
      if (row.class === 'block') expect(row.category).toBe('fatal');
      if (row.class === 'retry-now' || row.class === 'back-off') expect(row.category).toBe('transient');
    }
    expect(classificationTable.at(-1)?.reason).toBe('UNKNOWN_ERROR');
  });
});
