// Between etcd's snapshot stream and the store: counts the bytes and hashes them as they pass
// (no second read), and checks the stream is whole. etcd ends every snapshot with the SHA-256 of
// the bytes before it (etcdctl snapshot restore checks the same): a stream cut short or empty
// lacks it, so it is refused before the store keeps anything.
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';

const ETCD_CHECKSUM_BYTES = 32;

export interface SnapshotMeter {
  /** What the transport streams into. */
  stream: Writable;
  bytes(): number;
  /** Hex SHA-256 of every byte, etcd's checksum included: the file's own, as sha256sum says it. */
  sha256(): string;
  /** Set when the store failed the write: the store's fault, not etcd's. */
  storeError(): Error | undefined;
}

export function snapshotMeter(to: NodeJS.WritableStream): SnapshotMeter {
  const whole = createHash('sha256');
  // etcd's checksum covers all but the last 32 bytes, unknown until the end: hold them back.
  const content = createHash('sha256');
  let tail = Buffer.alloc(0);
  let bytes = 0;
  let storeError: Error | undefined;
  let digest: string | undefined;
  const failedStore = (error: unknown): Error => (storeError ??= error instanceof Error ? error : new Error(String(error)));

  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      whole.update(chunk);
      const joined = Buffer.concat([tail, chunk]);
      const keep = Math.max(0, joined.length - ETCD_CHECKSUM_BYTES);
      content.update(joined.subarray(0, keep));
      tail = joined.subarray(keep);
      try {
        if (to.write(chunk)) callback();
        else to.once('drain', () => callback());
      } catch (error) {
        callback(failedStore(error));
      }
    },
    final(callback) {
      if (bytes <= ETCD_CHECKSUM_BYTES) return callback(new Error(`the snapshot stream ended after ${bytes} bytes, before any data and etcd's checksum`));
      if (!content.digest().equals(tail))
        return callback(new Error(`the snapshot stream ended after ${bytes} bytes without etcd's checksum of them: cut short`));
      to.end();
      finished(to).then(
        () => callback(),
        (error: unknown) => callback(failedStore(error)),
      );
    },
  });
  to.on('error', (error: unknown) => stream.destroy(failedStore(error)));
  return {
    stream,
    bytes: () => bytes,
    sha256: () => (digest ??= whole.digest('hex')),
    storeError: () => storeError,
  };
}
