// etcd client credentials from Secrets Manager: one secret per cluster holding the CA, client
// certificate and key as PEM in JSON ({"ca","cert","key"}). Read once and cached per container.
// Nothing here logs, and no error carries the secret's text (not even a JSON parse message, which
// quotes the input): errors name the secret's ARN and the problem only.
import { inspect } from 'node:util';
import { GetSecretValueCommand, type GetSecretValueCommandOutput } from '@aws-sdk/client-secrets-manager';
import type { TlsFiles } from '../../ports/etcd.ts';

export interface SecretSource {
  tlsFiles(secretArn: string): Promise<TlsFiles>;
}

/** The one call we make; a SecretsManagerClient is one, and so is a test's fake. */
export interface SecretsClient {
  send(command: GetSecretValueCommand): Promise<GetSecretValueCommandOutput>;
}

/** Long enough that warm invocations never ask; short enough that a rotated certificate is picked up. */
export const DEFAULT_SECRET_CACHE_MS = 5 * 60_000;

export class SecretError extends Error {
  readonly secretArn: string;
  constructor(secretArn: string, problem: string) {
    super(`secret ${secretArn}: ${problem}`);
    this.name = 'SecretError';
    this.secretArn = secretArn;
  }
}

export function createSecretsManagerSource(client: SecretsClient, options: { cacheMs?: number; clock?: () => number } = {}): SecretSource {
  const cacheMs = options.cacheMs ?? DEFAULT_SECRET_CACHE_MS;
  const clock = options.clock ?? Date.now;
  // The promise is cached, so concurrent callers share one request; a failure is not kept.
  const cache = new Map<string, { at: number; files: Promise<TlsFiles> }>();
  return {
    tlsFiles(secretArn) {
      const hit = cache.get(secretArn);
      if (hit && clock() - hit.at < cacheMs) return hit.files;
      const files = fetchTlsFiles(client, secretArn);
      cache.set(secretArn, { at: clock(), files });
      files.catch(() => {
        if (cache.get(secretArn)?.files === files) cache.delete(secretArn);
      });
      return files;
    },
  };
}

async function fetchTlsFiles(client: SecretsClient, secretArn: string): Promise<TlsFiles> {
  let output: GetSecretValueCommandOutput;
  try {
    output = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
  } catch (error) {
    // The service's own words (not found, access denied) never quote a secret's value.
    const name = error instanceof Error ? error.name : 'Error';
    const message = error instanceof Error ? error.message : String(error);
    throw new SecretError(secretArn, `GetSecretValue failed: ${name}: ${message}`);
  }
  return parseTlsSecret(secretArn, secretText(secretArn, output));
}

function secretText(secretArn: string, output: GetSecretValueCommandOutput): string {
  if (typeof output.SecretString === 'string') return output.SecretString;
  if (output.SecretBinary instanceof Uint8Array) return Buffer.from(output.SecretBinary).toString('utf8');
  throw new SecretError(secretArn, 'holds no value');
}

const SHAPE = 'expected JSON {"ca": PEM, "cert": PEM, "key": PEM}';
const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/;
const PRIVATE_KEY = /-----BEGIN ([A-Z]+ )?PRIVATE KEY-----[\s\S]+-----END ([A-Z]+ )?PRIVATE KEY-----/;

/** Exported for tests. Every message names a field and what is wrong with it, never its content. */
export function parseTlsSecret(secretArn: string, text: string): TlsFiles {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SecretError(secretArn, `is not JSON (${SHAPE})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SecretError(secretArn, `is not a JSON object (${SHAPE})`);
  const fields = parsed as Record<string, unknown>;
  const pem = (field: string, pattern: RegExp, what: string): string | undefined => {
    const value = fields[field];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw new SecretError(secretArn, `field ${field}: expected a string, got ${Array.isArray(value) ? 'an array' : typeof value}`);
    if (!pattern.test(value)) throw new SecretError(secretArn, `field ${field}: is not ${what} in PEM`);
    return value;
  };
  const ca = pem('ca', CERTIFICATE, 'a certificate');
  if (ca === undefined) throw new SecretError(secretArn, `field ca: missing (${SHAPE})`);
  const cert = pem('cert', CERTIFICATE, 'a certificate');
  const key = pem('key', PRIVATE_KEY, 'a private key');
  if ((cert === undefined) !== (key === undefined)) throw new SecretError(secretArn, `fields cert and key: give both or neither (${cert ? 'key' : 'cert'} is missing)`);
  return redacted({ ca: Buffer.from(ca), ...(cert && key ? { cert: Buffer.from(cert), key: Buffer.from(key) } : {}) });
}

/** Should anyone log the credentials (or a cluster entry holding them), they print as redacted. */
function redacted(files: TlsFiles): TlsFiles {
  const shown = `[TlsFiles: ca${files.cert ? ', cert, key' : ''}; redacted]`;
  Object.defineProperty(files, 'toJSON', { value: () => shown, enumerable: false });
  Object.defineProperty(files, inspect.custom, { value: () => shown, enumerable: false });
  return files;
}
