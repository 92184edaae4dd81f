import { castGrpcError, ClientClosedError } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { normalizeEtcdError, toEtcdCallError } from '../../../../functions/adapters/etcd/normalize-error.ts';
import { EtcdCallError } from '../../../../functions/ports/etcd.ts';

/** What grpc-js rejects with: "<code> <NAME>: <details>" plus the status fields. */
function grpcError(code: number, name: string, details: string): Error {
  return Object.assign(new Error(`${code} ${name}: ${details}`), { code, details, metadata: {} });
}

/** What etcd3 rejects with: the same error re-typed into one of its classes, `code` dropped. */
const etcd3Error = (code: number, name: string, details: string): Error => castGrpcError(grpcError(code, name, details));

describe('normalizeEtcdError', () => {
  it.each([
    ['not leader', etcd3Error(9, 'FAILED_PRECONDITION', 'etcdserver: not leader'), { kind: 'other', grpcCode: 9, message: 'etcdserver: not leader' }],
    [
      'bad transferee',
      etcd3Error(9, 'FAILED_PRECONDITION', 'etcdserver: bad leader transferee'),
      { kind: 'other', grpcCode: 9, message: 'etcdserver: bad leader transferee' },
    ],
    ['member not found', etcd3Error(5, 'NOT_FOUND', 'etcdserver: member not found'), { kind: 'other', grpcCode: 5, message: 'etcdserver: member not found' }],
    [
      'leader transfer timeout',
      etcd3Error(14, 'UNAVAILABLE', 'etcdserver: leader transfer took too long'),
      { kind: 'other', grpcCode: 14, message: 'etcdserver: leader transfer took too long' },
    ],
    [
      'server-side request timeout',
      etcd3Error(14, 'UNAVAILABLE', 'etcdserver: request timed out'),
      { kind: 'other', grpcCode: 14, message: 'etcdserver: request timed out' },
    ],
    [
      'refused',
      etcd3Error(14, 'UNAVAILABLE', 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:2379. Resolution note: '),
      { kind: 'refused', grpcCode: 14, message: 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:2379. Resolution note: ' },
    ],
    [
      'deadline',
      etcd3Error(4, 'DEADLINE_EXCEEDED', 'Deadline exceeded after 0.500s,metadata filters: 0.001s,Waiting for LB pick'),
      { kind: 'timeout', grpcCode: 4, message: 'Deadline exceeded after 0.500s,metadata filters: 0.001s,Waiting for LB pick' },
    ],
    [
      'unknown CA',
      etcd3Error(14, 'UNAVAILABLE', 'No connection established. Last error: Error: unable to verify the first certificate. Resolution note: '),
      { kind: 'tls', grpcCode: 14 },
    ],
    [
      'client certificate rejected',
      etcd3Error(14, 'UNAVAILABLE', 'No connection established. Last error: 400D:error:0A000412:SSL routines:ssl3_read_bytes:ssl/tls alert bad certificate'),
      { kind: 'tls', grpcCode: 14 },
    ],
    [
      'TLS to a plain port',
      etcd3Error(
        14,
        'UNAVAILABLE',
        'No connection established. Last error: Error: Client network socket disconnected before secure TLS connection was established.',
      ),
      { kind: 'tls', grpcCode: 14 },
    ],
    [
      'permission denied',
      etcd3Error(7, 'PERMISSION_DENIED', 'etcdserver: permission denied'),
      { kind: 'auth', grpcCode: 7, message: 'etcdserver: permission denied' },
    ],
    ['invalid token', etcd3Error(3, 'INVALID_ARGUMENT', 'etcdserver: invalid auth token'), { kind: 'auth', grpcCode: 3 }],
    ['no user given', etcd3Error(3, 'INVALID_ARGUMENT', 'etcdserver: user name is empty'), { kind: 'auth', grpcCode: 3 }],
    ['unauthenticated', etcd3Error(16, 'UNAUTHENTICATED', 'bad token'), { kind: 'auth', grpcCode: 16, message: 'bad token' }],
    ['bare unavailable', etcd3Error(14, 'UNAVAILABLE', 'No connection established'), { kind: 'refused', grpcCode: 14 }],
    ['connection dropped', etcd3Error(14, 'UNAVAILABLE', 'Connection dropped'), { kind: 'refused', grpcCode: 14 }],
    ['unknown', etcd3Error(2, 'UNKNOWN', 'something odd'), { kind: 'other', grpcCode: 2, message: 'something odd' }],
  ])('%s', (_case, error, expected) => {
    expect(normalizeEtcdError(error)).toMatchObject(expected);
  });

  it('reads the code from an un-cast grpc-js error, as a snapshot stream emits it', () => {
    const raw = grpcError(4, 'DEADLINE_EXCEEDED', 'Deadline exceeded');
    expect(raw.constructor).toBe(Error);
    expect(normalizeEtcdError(raw)).toEqual({ kind: 'timeout', grpcCode: 4, message: 'Deadline exceeded' });
  });

  it('falls back to the etcd3 class when the message carries no code', () => {
    const cast = castGrpcError(Object.assign(new Error('lost'), { code: 4 }));
    expect(cast.constructor.name).toBe('GRPCDeadlineExceededError');
    expect(normalizeEtcdError(cast)).toEqual({ kind: 'timeout', grpcCode: 4, message: 'lost' });
  });

  it('classifies plain socket errors', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(normalizeEtcdError(refused)).toEqual({ kind: 'refused', message: 'connect ECONNREFUSED 127.0.0.1:1' });
    expect(normalizeEtcdError(new Error('connect ETIMEDOUT 10.0.0.1:2379')).kind).toBe('timeout');
  });

  it('treats a closed client and non-errors as "other"', () => {
    expect(normalizeEtcdError(new ClientClosedError('Maintenance')).kind).toBe('other');
    expect(normalizeEtcdError('boom')).toEqual({ kind: 'other', message: 'boom' });
  });

  it('passes an already normalized failure through', () => {
    const failure = { kind: 'timeout' as const, message: 'no answer within the 5 ms deadline' };
    expect(normalizeEtcdError(new EtcdCallError(failure))).toBe(failure);
  });
});

describe('toEtcdCallError', () => {
  it('wraps with the original as the cause', () => {
    const original = etcd3Error(9, 'FAILED_PRECONDITION', 'etcdserver: not leader');
    const wrapped = toEtcdCallError(original);
    expect(wrapped).toBeInstanceOf(EtcdCallError);
    expect(wrapped.message).toBe('etcdserver: not leader');
    expect(wrapped.cause).toBe(original);
  });
});

describe('a failed connect, as grpc-js wraps it', () => {
  const wrapped = (cause: string, note = '') => `No connection established. Last error: ${cause} (2026-11-30T19:56:20.761Z). Resolution note: ${note}`;
  const openssl =
    '40ED8C84CE7F0000:error:0A000412:SSL routines:ssl3_read_bytes:ssl/tls alert bad certificate:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:918:SSL alert number 42\n';

  it('says the OpenSSL reason and alert, not the wrapping, and still classifies it as TLS', () => {
    const failure = normalizeEtcdError(grpcError(14, 'UNAVAILABLE', wrapped(openssl)));
    expect(failure).toEqual({ kind: 'tls', grpcCode: 14, message: 'ssl/tls alert bad certificate, SSL alert number 42' });
  });

  it('keeps a plain cause and the resolution note', () => {
    expect(normalizeEtcdError(grpcError(14, 'UNAVAILABLE', wrapped('connect ECONNREFUSED 127.0.0.1:1', 'DNS resolution failed')))).toEqual({
      kind: 'refused',
      grpcCode: 14,
      message: 'connect ECONNREFUSED 127.0.0.1:1 (DNS resolution failed)',
    });
  });

  it('leaves any other message as it is', () => {
    expect(normalizeEtcdError(new Error('No connection established')).message).toBe('No connection established');
  });
});
