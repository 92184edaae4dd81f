// The snapshot bucket as synthesized: S3-managed encryption, all public access blocked, TLS only,
// versioned, kept when the stack goes, its lifecycle (expiry after the retention, incomplete
// uploads aborted after a day), and remediate told its name.
import { testApp } from './test-app.ts';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { EtcdRemediatorStack } from '../../infra/cdk/stack.ts';
import { functionsByName, requireRef, resourcesOf, type CfnTemplate } from './synth.ts';

let template: Template;
let json: CfnTemplate;
beforeAll(() => {
  const app = testApp({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const stack = new EtcdRemediatorStack(app, 'EtcdRemediator');
  template = Template.fromStack(stack);
  json = template.toJSON() as CfnTemplate;
});

describe('the snapshot bucket', () => {
  it('is the one bucket, encrypted, private, versioned, with its lifecycle', () => {
    expect(resourcesOf(json, 'AWS::S3::Bucket')).toHaveLength(1);
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        VersioningConfiguration: { Status: 'Enabled' },
        LifecycleConfiguration: {
          Rules: [
            {
              Id: 'expire-snapshots',
              Status: 'Enabled',
              ExpirationInDays: 30,
              NoncurrentVersionExpiration: { NoncurrentDays: 30 },
              AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
            },
            { Id: 'expired-markers', Status: 'Enabled', ExpiredObjectDeleteMarker: true },
          ],
        },
      },
    });
  });

  it('refuses every request that is not over TLS', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Principal: { AWS: '*' }, Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('is named to remediate as SNAPSHOT_BUCKET', () => {
    const [bucketId] = resourcesOf(json, 'AWS::S3::Bucket')[0]!;
    expect(requireRef(functionsByName(json).get('remediate')!.props.Environment.Variables.SNAPSHOT_BUCKET)).toBe(bucketId);
  });

  it('keeps snapshots as long as the construct is told', () => {
    const app = testApp({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
    const stack = new EtcdRemediatorStack(app, 'Retention', { remediation: { snapshotRetentionDays: 7 } });
    Template.fromStack(stack).hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 7, NoncurrentVersionExpiration: { NoncurrentDays: 7 } })]) },
    });
  });
});
