// The S3 snapshot store against the S3 fake, through the real SDK client the remediate function
// builds: a snapshot streamed as a multipart upload (parts of 8 MiB, the last smaller), completed
// only once whole, its bytes' SHA-256 beside it; a part answered SlowDown once is sent again; one
// S3 keeps refusing fails the store and leaves no object and no open upload; the fake refuses what
// S3 refuses.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { s3Snapshots } from '../../../functions/adapters/aws/s3-snapshots.ts';
import { snapshotMeter } from '../../../functions/app/removal/snapshot-meter.ts';
import { SNAPSHOT_PREFIX } from '../../../functions/aws-wiring/lazy-snapshots.ts';
import { snapshotsClient } from '../../../functions/aws-wiring/snapshots-chunk.ts';
import { etcdSnapshotBytes } from '../../support/etcd-snapshot-bytes.ts';
import { MIN_PART_BYTES, startS3Fake, type S3Fake } from '../../support/fakes/s3-fake.ts';

const BUCKET = 'etcd-remediator-snapshots';
const subject = { clusterId: 'prod-eu-1', incidentId: 'inc-1', member: 'etcd-1' };
const KEY = `${SNAPSHOT_PREFIX}prod-eu-1/inc-1-etcd-1.db`;
const MiB = 1024 * 1024;

let fake: S3Fake;
let client: S3Client;
beforeAll(async () => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDFAKE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'fake-secret');
  fake = await startS3Fake({ buckets: [BUCKET] });
  client = snapshotsClient({ AWS_ENDPOINT_URL_S3: fake.endpoint, AWS_REGION: 'eu-west-1' });
});
afterAll(async () => {
  client?.destroy();
  await fake?.close();
  vi.unstubAllEnvs();
});
afterEach(() => {
  fake.objects.clear();
  fake.calls.length = 0;
  fake.slowDownParts(0);
});

/** etcd's stream in gRPC-sized chunks, through the meter, into the store; then kept or discarded as take-snapshot does. */
async function take(bytes: Buffer, bucket = BUCKET) {
  const store = s3Snapshots(client, { bucket, prefix: SNAPSHOT_PREFIX });
  const target = await store.open(subject);
  const meter = snapshotMeter(target.stream);
  const chunks = Array.from({ length: Math.ceil(bytes.length / (64 * 1024)) }, (_, i) => bytes.subarray(i * 64 * 1024, (i + 1) * 64 * 1024));
  try {
    await pipeline(Readable.from(chunks), meter.stream);
    await target.keep(meter.sha256());
    return { target, meter };
  } catch (error) {
    await target.discard();
    throw Object.assign(error as Error, { storeError: meter.storeError() });
  }
}

describe('S3 snapshots', () => {
  it('streams a multipart upload, completes it once whole, and puts its SHA-256 beside it, all encrypted', async () => {
    const bytes = etcdSnapshotBytes(Buffer.alloc(12 * MiB, 7));
    const { target, meter } = await take(bytes);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(target.location).toBe(`s3://${BUCKET}/${KEY}`);
    expect(meter.sha256()).toBe(sha256);
    const object = fake.objects.get(`${BUCKET}/${KEY}`)!;
    expect(object.body.equals(bytes)).toBe(true);
    expect(object.etag).toMatch(/-2"$/);
    expect(object).toMatchObject({ serverSideEncryption: 'AES256', metadata: { cluster: 'prod-eu-1', incident: 'inc-1', member: 'etcd-1' } });
    const sidecar = fake.objects.get(`${BUCKET}/${KEY}.sha256`)!;
    expect(sidecar.body.toString()).toBe(`${sha256}  inc-1-etcd-1.db\n`);
    expect(sidecar).toMatchObject({ serverSideEncryption: 'AES256', metadata: { sha256 } });
    expect(fake.calls.map((c) => `${c.operation} ${c.status}`)).toEqual([
      'CreateMultipartUpload 200',
      'UploadPart 200',
      'UploadPart 200',
      'CompleteMultipartUpload 200',
      'PutObject 200',
    ]);
    expect(fake.openUploads()).toEqual([]);
  });

  it('a part answered 503 SlowDown once is sent again by the client, and the snapshot is whole', async () => {
    fake.slowDownParts(1);
    const bytes = etcdSnapshotBytes('a small keyspace');
    await take(bytes);
    expect(fake.objects.get(`${BUCKET}/${KEY}`)!.body.equals(bytes)).toBe(true);
    expect(fake.calls.filter((c) => c.operation === 'UploadPart').map((c) => c.status)).toEqual([503, 200]);
  });

  it('parts S3 keeps refusing: the store fails, the upload is aborted, and no object is left', async () => {
    fake.slowDownParts(100);
    const error = await take(etcdSnapshotBytes('a small keyspace')).then(
      () => undefined,
      (e: unknown) => e as Error & { storeError?: Error },
    );
    expect(error?.storeError?.message).toMatch(/reduce your request rate/);
    expect([...fake.objects.keys()]).toEqual([]);
    expect(fake.openUploads()).toEqual([]);
    expect(fake.calls.at(-1)).toMatchObject({ operation: 'AbortMultipartUpload', status: 204 });
  });

  it('a stream etcd cut short is never completed: aborted, no object', async () => {
    const cut = etcdSnapshotBytes(Buffer.alloc(MiB, 1)).subarray(0, MiB / 2);
    await expect(take(cut)).rejects.toThrow(/cut short/);
    expect([...fake.objects.keys()]).toEqual([]);
    expect(fake.openUploads()).toEqual([]);
    expect(fake.calls.map((c) => c.operation)).not.toContain('CompleteMultipartUpload');
  });

  it('a bucket that does not exist: NoSuchBucket when the snapshot is opened, before etcd is asked', async () => {
    await expect(s3Snapshots(client, { bucket: 'no-such-bucket', prefix: SNAPSHOT_PREFIX }).open(subject)).rejects.toMatchObject({ name: 'NoSuchBucket' });
  });
});

describe('the S3 fake refuses what S3 refuses', () => {
  const upload = async (key: string) => (await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }))).UploadId!;
  const part = async (key: string, uploadId: string, PartNumber: number, size: number) =>
    (await client.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId, PartNumber, Body: Buffer.alloc(size, PartNumber) }))).ETag!;
  const complete = (key: string, uploadId: string, Parts: { PartNumber: number; ETag: string }[]) =>
    client.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId, MultipartUpload: { Parts } }));

  it('a Complete naming a part never uploaded, or with the wrong ETag: InvalidPart', async () => {
    const id = await upload('k1');
    const etag = await part('k1', id, 1, 10);
    await expect(
      complete('k1', id, [
        { PartNumber: 1, ETag: etag },
        { PartNumber: 2, ETag: etag },
      ]),
    ).rejects.toMatchObject({ name: 'InvalidPart' });
    await expect(complete('k1', id, [{ PartNumber: 1, ETag: '"0000"' }])).rejects.toMatchObject({ name: 'InvalidPart' });
  });

  it('a part but the last under 5 MiB: EntityTooSmall; parts out of order: InvalidPartOrder; an unknown upload: NoSuchUpload', async () => {
    const id = await upload('k2');
    const small = await part('k2', id, 1, 1024);
    const last = await part('k2', id, 2, 10);
    await expect(
      complete('k2', id, [
        { PartNumber: 1, ETag: small },
        { PartNumber: 2, ETag: last },
      ]),
    ).rejects.toMatchObject({ name: 'EntityTooSmall' });
    await expect(
      complete('k2', id, [
        { PartNumber: 2, ETag: last },
        { PartNumber: 1, ETag: small },
      ]),
    ).rejects.toMatchObject({ name: 'InvalidPartOrder' });
    const big = await part('k2', id, 1, MIN_PART_BYTES);
    await complete('k2', id, [
      { PartNumber: 1, ETag: big },
      { PartNumber: 2, ETag: last },
    ]);
    expect(fake.objects.get(`${BUCKET}/k2`)!.body.length).toBe(MIN_PART_BYTES + 10);
    await expect(complete('k2', id, [{ PartNumber: 1, ETag: big }])).rejects.toMatchObject({ name: 'NoSuchUpload' });
    await expect(part('k2', 'not-an-upload', 1, 10)).rejects.toMatchObject({ name: 'NoSuchUpload' });
  });
});
