// What remediate loads only when it takes a snapshot: the S3 client and the bucket's adapter.
// Imported dynamically (lazy-snapshots.ts), so the bundler puts it in a chunk of its own, and an
// invocation that never reaches a removal (or a policy without snapshots) never loads it.
import { S3Client } from '@aws-sdk/client-s3';
import { clientConfig, type Env } from './env.ts';

export { s3Snapshots } from '../adapters/aws/s3-snapshots.ts';

/**
 * No per-request checksums unless S3 requires one: the whole snapshot's SHA-256 is recorded and
 * etcd's own checksum travels inside it (etcdutl checks it on restore), and each part's length is
 * checked by S3; the SDK's default would add a CRC to every part for nothing.
 */
export const snapshotsClient = (env: Env) => new S3Client({ ...clientConfig(env, 'S3'), requestChecksumCalculation: 'WHEN_REQUIRED' });
