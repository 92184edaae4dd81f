// The CDK app: `npm run synth` (node infra/app.ts) writes cdk.out, offline, the functions bundled
// by the local esbuild; `npx cdk deploy` (cdk.json names this file) deploys it. The VPC comes from
// context: `-c vpcId=vpc-… -c subnetIds=subnet-…,subnet-… -c securityGroupId=sg-…`.
import { App } from 'aws-cdk-lib';
import { appStack } from './cdk/app-stack.ts';
import { ContextError } from './cdk/network-context.ts';

const started = performance.now();
const app = new App({ outdir: process.env.CDK_OUTDIR ?? 'cdk.out' });
try {
  appStack(app);
} catch (error) {
  if (!(error instanceof ContextError)) throw error;
  process.stderr.write(`etcd-remediator app: ${error.message}\n`);
  process.exit(2);
}
const assembly = app.synth();
process.stderr.write(`synth: ${assembly.directory} in ${Math.round(performance.now() - started)} ms\n`);
