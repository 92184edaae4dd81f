// The snapshot's decisions, table-driven: a required snapshot that failed blocks, naming each
// member tried, the path, etcd's words and what to do; a transient etcd failure is retried a
// bounded number of times first; a store's failure never is.
import { describe, expect, it } from 'vitest';
import {
  describeSnapshotFailure,
  isTransient,
  SNAPSHOT_NOT_OVER_RELAY,
  SNAPSHOT_TRANSIENT_RETRIES,
  snapshotFailed,
  type SnapshotFailure,
  type SnapshotTry,
} from '../../../../functions/core/removal/snapshot-steps.ts';

const at = Date.parse('2026-01-01T00:00:01.500Z');
const timedOut: SnapshotTry = {
  member: 'etcd-2 (b)',
  path: 'direct',
  endpoint: 'http://127.0.0.1:2',
  failure: { kind: 'other', message: 'etcdserver: request timed out' },
};
const cutShort: SnapshotTry = {
  member: 'etcd-3 (c)',
  path: 'port-forward',
  endpoint: 'http://127.0.0.1:3',
  failure: { kind: 'other', message: "the snapshot stream ended after 40 bytes without etcd's checksum of them: cut short" },
};
const denied: SnapshotTry = {
  member: 'etcd-2 (b)',
  path: 'direct',
  endpoint: 'http://127.0.0.1:2',
  failure: { kind: 'auth', message: 'etcdserver: permission denied' },
};
const transient: SnapshotFailure = { kind: 'members', tries: [timedOut, cutShort] };
const full: SnapshotFailure = { kind: 'store', store: 'directory /var/lib/s', said: 'ENOSPC: no space left on device', tries: [] };

describe('snapshot before removal: the decisions', () => {
  it.each<{ name: string; failure: SnapshotFailure; earlier: number; kind: 'retry' | 'block'; says: RegExp[] }>([
    {
      name: 'a transient etcd failure, first time',
      failure: transient,
      earlier: 0,
      kind: 'retry',
      says: [
        /etcd-2 \(b\) over direct http:\/\/127\.0\.0\.1:2 said "etcdserver: request timed out"; etcd-3 \(c\) over port-forward/,
        /retry 1 of 2/,
        /try again at 2026-01-01T00:00:01\.500Z/,
      ],
    },
    { name: 'a transient etcd failure, last retry', failure: transient, earlier: SNAPSHOT_TRANSIENT_RETRIES - 1, kind: 'retry', says: [/retry 2 of 2/] },
    {
      name: 'a transient etcd failure past its retries',
      failure: transient,
      earlier: SNAPSHOT_TRANSIENT_RETRIES,
      kind: 'block',
      says: [/after 3 tries; blocked/, /Check the members named/, /snapshotRequired to false/],
    },
    {
      name: 'a refusal that does not pass by itself',
      failure: { kind: 'members', tries: [denied, timedOut] },
      earlier: 0,
      kind: 'block',
      says: [/permission denied/, /blocked\. Check the members/],
    },
    {
      name: 'the store is full',
      failure: full,
      earlier: 0,
      kind: 'block',
      says: [
        /the snapshot store directory \/var\/lib\/s refused it: ENOSPC/,
        /free disk space/,
        /snapshotRequired to false/,
        /then report the member again\.$/,
      ],
    },
    {
      name: 'no healthy member',
      failure: { kind: 'members', tries: [] },
      earlier: 0,
      kind: 'block',
      says: [/no healthy member other than the target answers/],
    },
    { name: 'no store', failure: { kind: 'no-store' }, earlier: 0, kind: 'block', says: [/no snapshot store is configured/, /--snapshot-dir/] },
  ])('$name: $kind', ({ failure, earlier, kind, says }) => {
    const decision = snapshotFailed('etcd-1', failure, { earlierTransient: earlier, retryAt: at });
    expect(decision.kind).toBe(kind);
    expect(decision.reason).toBe('SNAPSHOT_FAILED');
    expect(decision.evidence.decidedBy).toBe('snapshot-before-remove');
    expect(decision.message).toMatch(/^No snapshot could be taken before removing etcd-1: .*; nothing was removed/);
    for (const said of says) expect(decision.message).toMatch(said);
    if (decision.kind === 'retry') expect(decision.at).toBe(at);
  });

  it('only etcd failures that pass by themselves are transient', () => {
    expect(isTransient(transient)).toBe(true);
    expect(isTransient({ kind: 'members', tries: [denied] })).toBe(false);
    expect(isTransient({ kind: 'members', tries: [] })).toBe(false);
    expect(isTransient(full)).toBe(false);
    // The relay has no stream to give, however often it is asked.
    const relayed: SnapshotTry = { ...timedOut, path: 'exec-relay', failure: { kind: 'other', message: SNAPSHOT_NOT_OVER_RELAY } };
    expect(isTransient({ kind: 'members', tries: [timedOut, relayed] })).toBe(false);
    expect(snapshotFailed('etcd-1', { kind: 'members', tries: [relayed] }, { earlierTransient: 0, retryAt: at }).message).toMatch(
      /over exec-relay .* said "the exec relay streams no snapshot; give the cluster a direct or port-forward path"; nothing was removed; blocked/,
    );
    expect(describeSnapshotFailure({ ...full, tries: [timedOut] })).toContain('(after etcd-2 (b) over direct');
  });
});
