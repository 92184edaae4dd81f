// The meter between etcd's stream and the store: size and SHA-256 as the bytes pass, and a stream
// without etcd's trailing checksum (empty, cut short) refused before the store ends.
import { createHash } from 'node:crypto';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { snapshotMeter } from '../../../../functions/app/removal/snapshot-meter.ts';
import { etcdSnapshotBytes } from '../../../support/etcd-snapshot-bytes.ts';

const collecting = () => {
  const chunks: Buffer[] = [];
  let ended = false;
  const stream = new Writable({
    write: (chunk: Buffer, _encoding, done) => void (chunks.push(chunk), done()),
    final: (done) => void ((ended = true), done()),
  });
  return { stream, bytes: () => Buffer.concat(chunks), ended: () => ended };
};

/** The bytes in chunks of `size`, as gRPC hands them over. */
const chunked = (bytes: Buffer, size: number) =>
  Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)));

describe('snapshot meter', () => {
  it.each([1, 7, 32, 33, 4096])('counts and hashes a whole stream in chunks of %i bytes, passing every byte on', async (size) => {
    const whole = etcdSnapshotBytes(Buffer.alloc(10_000, 'k'));
    const to = collecting();
    const meter = snapshotMeter(to.stream);
    await pipeline(chunked(whole, size), meter.stream);
    expect(to.bytes().equals(whole)).toBe(true);
    expect(to.ended()).toBe(true);
    expect(meter.bytes()).toBe(whole.length);
    expect(meter.sha256()).toBe(createHash('sha256').update(whole).digest('hex'));
    expect(meter.storeError()).toBeUndefined();
  });

  it.each([
    { name: 'empty', bytes: Buffer.alloc(0), says: /ended after 0 bytes, before any data/ },
    { name: 'only a checksum long', bytes: Buffer.alloc(32, 1), says: /ended after 32 bytes, before any data/ },
    {
      name: 'cut short',
      bytes: etcdSnapshotBytes(Buffer.alloc(5_000, 'k')).subarray(0, 4_000),
      says: /ended after 4000 bytes without etcd's checksum of them: cut short/,
    },
  ])('refuses a stream $name, and never ends the store', async ({ bytes, says }) => {
    const to = collecting();
    const meter = snapshotMeter(to.stream);
    await expect(pipeline(chunked(bytes, 512), meter.stream)).rejects.toThrow(says);
    expect(to.ended()).toBe(false);
    expect(meter.storeError()).toBeUndefined();
  });

  it('a store that fails the write is the store’s failure', async () => {
    const to = new PassThrough();
    const meter = snapshotMeter(to);
    const failing = pipeline(chunked(etcdSnapshotBytes('data'), 4), meter.stream);
    to.destroy(new Error('ENOSPC: no space left on device'));
    await expect(failing).rejects.toThrow(/ENOSPC/);
    expect(meter.storeError()?.message).toMatch(/ENOSPC/);
  });
});
