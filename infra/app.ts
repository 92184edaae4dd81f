// The CDK app: `npm run synth` (node infra/app.ts) writes cdk.out, offline, the functions bundled
// by the local esbuild; `npx cdk deploy` (cdk.json names this file) deploys it.
import { App } from 'aws-cdk-lib';
import { EtcdRemediatorStack } from './cdk/stack.ts';

const started = performance.now();
const app = new App({ outdir: process.env.CDK_OUTDIR ?? 'cdk.out' });
new EtcdRemediatorStack(app, 'EtcdRemediator', {
  description: 'etcd-remediator: leader-aware, event-driven etcd member remediation',
  // Deploys to the account and region of the caller's credentials; synth needs neither.
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
const assembly = app.synth();
process.stderr.write(`synth: ${assembly.directory} in ${Math.round(performance.now() - started)} ms\n`);
