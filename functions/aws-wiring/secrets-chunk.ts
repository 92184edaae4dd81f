// What a function loads only when the directory first reads a cluster's secret (a TLS key, a
// kubeconfig): the Secrets Manager client. Imported dynamically (lazy-secrets.ts), so the bundler
// puts it in a chunk of its own, and a container whose clusters have no secret never loads it.
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { clientConfig, type Env } from './env.ts';

export { createSecretsManagerSource } from '../adapters/aws/secrets.ts';

export const secretsClient = (env: Env) => new SecretsManagerClient(clientConfig(env, 'SECRETS_MANAGER'));
