// The app's one stack, from its context: what `node infra/app.ts` and `npx cdk synth|deploy`
// build, kept apart from app.ts so tests build the same stack without spawning it.
import type { App, Environment } from 'aws-cdk-lib';
import { deployContextOf } from './deploy-context.ts';
import { networkContextOf } from './network-context.ts';
import { EtcdRemediatorStack } from './stack.ts';

export const APP_STACK_ID = 'EtcdRemediator';

/** Deploys to the account and region of the caller's credentials; synth needs neither unless a VPC is looked up. */
export const callerEnvironment = (env: NodeJS.ProcessEnv = process.env): Environment => ({
  // An empty variable is no account: CDK would take '' for one and build names that are invalid.
  account: env.CDK_DEFAULT_ACCOUNT || undefined,
  region: env.CDK_DEFAULT_REGION || undefined,
});

/** Throws ContextError, naming the key, for a context value that is not what it should be. */
export function appStack(app: App, env: Environment = callerEnvironment()): EtcdRemediatorStack {
  const read = (key: string) => app.node.tryGetContext(key) as unknown;
  const network = networkContextOf(read);
  return new EtcdRemediatorStack(app, APP_STACK_ID, {
    description: 'etcd-remediator: leader-aware, event-driven etcd member remediation',
    env,
    ...(network ? { network } : {}),
    deploy: deployContextOf(read),
  });
}
