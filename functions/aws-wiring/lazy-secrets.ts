// The directory's secret source, with the Secrets Manager client loaded and built on the first
// secret read (secrets-chunk.ts): an entry without a TLS secret or kubeconfig never needs it.
import type { SecretSource } from '../adapters/aws/secrets.ts';
import type { Env } from './env.ts';
// Types only: erased from the build, so the chunk stays out of index.mjs.
import type * as SecretsChunkModule from './secrets-chunk.ts';
import { lazyImport } from '../lib/lazy-import.ts';

type Chunk = typeof SecretsChunkModule;

export function lazySecretsSource(env: Env, load: () => Promise<Chunk> = () => import('./secrets-chunk.ts')): SecretSource {
  const made = lazyImport(async () => {
    const chunk = await load();
    return chunk.createSecretsManagerSource(chunk.secretsClient(env));
  }).load;
  return {
    tlsFiles: async (secretArn) => (await made()).tlsFiles(secretArn),
    kubeconfig: async (secretArn) => (await made()).kubeconfig(secretArn),
  };
}
