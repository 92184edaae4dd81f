// A snapshot stream as etcd sends it (the database's bytes, then the SHA-256 of those bytes), and
// a snapshot store in memory, for tests that run remediation without a real etcd.
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { SnapshotStore } from '../../functions/ports/snapshots.ts';

export const etcdSnapshotBytes = (content: Buffer | string = 'bbolt database bytes'): Buffer => {
  const data = Buffer.from(content);
  return Buffer.concat([data, createHash('sha256').update(data).digest()]);
};

/** Writes a whole etcd snapshot stream into `to` and ends it, as the transport does. */
export async function streamEtcdSnapshot(to: NodeJS.WritableStream, content?: Buffer | string): Promise<void> {
  to.end(etcdSnapshotBytes(content));
  await finished(to);
}

/** Snapshots kept in memory, by location, once kept. */
export function memorySnapshots(): SnapshotStore & { kept: Map<string, Buffer> } {
  const kept = new Map<string, Buffer>();
  return {
    kept,
    describe: 'memory',
    async open({ incidentId, member }) {
      const chunks: Buffer[] = [];
      const location = `memory:${incidentId}-${member}`;
      return {
        stream: new Writable({ write: (chunk: Buffer, _encoding, done) => void (chunks.push(chunk), done()) }),
        location,
        keep: async () => void kept.set(location, Buffer.concat(chunks)),
        discard: async () => undefined,
      };
    },
  };
}
