// The bucket for the snapshots remediate takes before each removal: encrypted at rest with
// S3-managed keys (no KMS key to pay for or grant), every kind of public access blocked, TLS only,
// kept when the construct is removed (a snapshot may be the last copy of a cluster's data).
// Versioned, so an object written over (the same incident retaking its snapshot, or a role gone
// wrong) keeps its earlier bytes: a snapshot is current for the retention, then kept as a
// noncurrent version for as long again. An upload that never completed is aborted after a day, so
// the bucket never bills for parts nobody will finish.
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { acknowledge } from './nag.ts';

/** How long a snapshot is kept by default: long enough to restore after a removal found wrong a month late. */
export const SNAPSHOT_RETENTION_DAYS = 30;

export function snapshotBucket(scope: Construct, id: string, retentionDays = SNAPSHOT_RETENTION_DAYS): Bucket {
  const bucket = new Bucket(scope, id, {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: true,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: [
      {
        id: 'expire-snapshots',
        expiration: Duration.days(retentionDays),
        noncurrentVersionExpiration: Duration.days(retentionDays),
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      },
      // A version's expiry leaves a delete marker; once it has no versions left, it goes too.
      { id: 'expired-markers', expiredObjectDeleteMarker: true },
    ],
  });
  acknowledge(
    bucket,
    'AwsSolutions-S1',
    'Server access logs would need a second bucket of their own (and nag would ask the same of it); the one writer is the remediate role, each write is an incident journaled with the object key, size and SHA-256, and CloudTrail data events cover the bucket where an account wants every request.',
  );
  return bucket;
}
