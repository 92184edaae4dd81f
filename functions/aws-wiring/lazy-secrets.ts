// The directory's secret source, with the Secrets Manager client loaded and built on the first
// secret read (secrets-chunk.ts): an entry without a TLS secret or kubeconfig never needs it.
import type { SecretSource } from '../adapters/aws/secrets.ts';
import type { Env } from './env.ts';
// Types only: erased from the build, so the chunk stays out of index.mjs.
import type * as SecretsChunkModule from './secrets-chunk.ts';

type Chunk = typeof SecretsChunkModule;

export function lazySecretsSource(env: Env, load: () => Promise<Chunk> = () => import('./secrets-chunk.ts')): SecretSource {
  let source: Promise<SecretSource> | undefined;
  const made = (): Promise<SecretSource> =>
    (source ??= load().then(
      (chunk) => chunk.createSecretsManagerSource(chunk.secretsClient(env)),
      (error: unknown) => {
        // The next read tries again, rather than failing on this one's error for the container's life.
        source = undefined;
        throw error;
      },
    ));
  return {
    tlsFiles: async (secretArn) => (await made()).tlsFiles(secretArn),
    kubeconfig: async (secretArn) => (await made()).kubeconfig(secretArn),
  };
}
