// Snapshots before removal in the construct's S3 bucket, streamed as a multipart upload: parts
// of PART_BYTES, one in flight at a time, so a snapshot of any size costs one part of memory and
// etcd's stream waits while a part uploads. Our own multipart over client-s3, not lib-storage's
// Upload: Upload completes the object the moment the body ends, and here nothing is completed
// before the bytes were checked (keep): a stream etcd cut short is aborted, never an object.
// Encrypted with S3-managed keys (SSE-S3): the role needs no KMS grant, and the bucket's default
// says the same. The SHA-256 is known only once every part is sent, after the object's metadata
// was fixed, so it goes in a sidecar object <key>.sha256 (sha256sum's format, and as metadata):
// PutObject only, no read-back or copy for the role.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Writable } from 'node:stream';
import type { SnapshotStore, SnapshotSubject } from '../../ports/snapshots.ts';

/** Above S3's 5 MiB least part ("Multipart upload limits"); 10,000 of them are 80 GiB, ten times etcd's largest quota. */
export const PART_BYTES = 8 * 1024 * 1024;
/** S3's most parts in one upload. */
export const MAX_PARTS = 10_000;

export interface S3SnapshotsOptions {
  bucket: string;
  /** Every key starts with it; the role may write under it only. */
  prefix: string;
  partBytes?: number;
}

const safe = (name: string): string => name.replace(/[^\w.-]/g, '_').replace(/^\.+/, '_');
/** S3 user metadata travels as HTTP headers: ASCII only. */
const metaValue = (text: string): string => encodeURIComponent(text);

export const snapshotKey = (prefix: string, subject: SnapshotSubject): string =>
  `${prefix}${safe(subject.clusterId)}/${safe(subject.incidentId)}-${safe(subject.member)}.db`;

export function s3Snapshots(client: S3Client, options: S3SnapshotsOptions): SnapshotStore {
  const { bucket, prefix } = options;
  const partBytes = options.partBytes ?? PART_BYTES;
  return {
    describe: `bucket ${bucket}`,
    async open(subject) {
      const key = snapshotKey(prefix, subject);
      const created = await client.send(
        new CreateMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          ServerSideEncryption: 'AES256',
          ContentType: 'application/octet-stream',
          Metadata: { cluster: metaValue(subject.clusterId), incident: metaValue(subject.incidentId), member: metaValue(subject.member) },
        }),
      );
      const uploadId = created.UploadId;
      if (!uploadId) throw new Error(`CreateMultipartUpload for s3://${bucket}/${key} returned no UploadId`);
      const parts: { PartNumber: number; ETag: string }[] = [];
      let pending: Buffer[] = [];
      let pendingBytes = 0;

      const sendPart = async (): Promise<void> => {
        if (parts.length >= MAX_PARTS) throw new Error(`the snapshot needs more than S3's ${MAX_PARTS} parts of ${partBytes} bytes`);
        const body = Buffer.concat(pending);
        pending = [];
        pendingBytes = 0;
        const PartNumber = parts.length + 1;
        const sent = await client.send(
          new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber, Body: body, ContentLength: body.length }),
        );
        if (!sent.ETag) throw new Error(`UploadPart ${PartNumber} of s3://${bucket}/${key} returned no ETag`);
        parts.push({ PartNumber, ETag: sent.ETag });
      };

      const stream = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (pendingBytes < partBytes) return callback();
          sendPart().then(() => callback(), callback);
        },
        final(callback) {
          // The last part may be smaller than the least; an upload needs at least one.
          if (pendingBytes === 0 && parts.length > 0) return callback();
          sendPart().then(() => callback(), callback);
        },
      });

      return {
        stream,
        location: `s3://${bucket}/${key}`,
        async keep(sha256) {
          await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
          await client.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: `${key}.sha256`,
              Body: `${sha256}  ${key.slice(key.lastIndexOf('/') + 1)}\n`,
              ContentType: 'text/plain',
              ServerSideEncryption: 'AES256',
              Metadata: { sha256 },
            }),
          );
        },
        async discard() {
          // S3 keeps the parts of an upload never completed or aborted (and bills them): abort it.
          await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
        },
      };
    },
  };
}
