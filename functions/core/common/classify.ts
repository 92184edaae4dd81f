// Reads the classification table. Precedence: etcd's message, then the transport's kind, then the
// gRPC code; within each, the first matching row wins. The last row catches the rest.
// Kind beats code because grpc-js reports a failed TLS handshake as UNAVAILABLE; the code only
// decides when the transport could not tell (kind 'other', which no row lists).
import { classificationTable, type ClassificationRow } from './classification-table.ts';
import type { EtcdFailure } from './types.ts';

type Matcher = (row: ClassificationRow, f: EtcdFailure) => boolean;

const byMessage: Matcher = (row, f) => {
  const message = f.message.toLowerCase();
  return (row.match.messages ?? []).some((m) => message.includes(m.toLowerCase()));
};
const byGrpcCode: Matcher = (row, f) => f.grpcCode !== undefined && (row.match.grpcCodes ?? []).includes(f.grpcCode);
const byKind: Matcher = (row, f) => (row.match.kinds ?? []).includes(f.kind);
const catchAll: Matcher = (row) => !row.match.messages?.length && !row.match.grpcCodes?.length && !row.match.kinds?.length;

export function classifyFailure(f: EtcdFailure, table: readonly ClassificationRow[] = classificationTable): ClassificationRow {
  for (const matches of [byMessage, byKind, byGrpcCode, catchAll]) {
    const row = table.find((r) => matches(r, f));
    if (row) return row;
  }
  throw new Error('classification table has no catch-all row');
}
