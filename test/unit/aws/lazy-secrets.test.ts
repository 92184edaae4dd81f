// The directory's secret source loads the Secrets Manager client on the first secret read, once,
// and tries again after a load that failed.
import { describe, expect, it, vi } from 'vitest';
import type { SecretSource } from '../../../functions/adapters/aws/secrets.ts';
import { lazySecretsSource } from '../../../functions/aws-wiring/lazy-secrets.ts';
import type * as SecretsChunk from '../../../functions/aws-wiring/secrets-chunk.ts';

const source: SecretSource = { tlsFiles: async () => ({ ca: Buffer.from('ca') }), kubeconfig: async (arn) => `kubeconfig of ${arn}` };
const chunk = { createSecretsManagerSource: () => source, secretsClient: () => ({}) } as unknown as typeof SecretsChunk;

describe('lazySecretsSource', () => {
  it('loads nothing until the first read, then once for every read', async () => {
    const load = vi.fn(async () => chunk);
    const secrets = lazySecretsSource({}, load);
    expect(load).not.toHaveBeenCalled();
    expect(await secrets.kubeconfig('arn:k')).toBe('kubeconfig of arn:k');
    expect((await secrets.tlsFiles('arn:t')).ca.toString()).toBe('ca');
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('tries the load again after one that failed', async () => {
    const load = vi.fn<() => Promise<typeof SecretsChunk>>().mockRejectedValueOnce(new Error('no chunk')).mockResolvedValue(chunk);
    const secrets = lazySecretsSource({}, load);
    await expect(secrets.kubeconfig('arn:k')).rejects.toThrow('no chunk');
    expect(await secrets.kubeconfig('arn:k')).toBe('kubeconfig of arn:k');
    expect(load).toHaveBeenCalledTimes(2);
  });
});
