// A cluster's secrets from Secrets Manager: etcd client credentials (the CA, client certificate
// and key as PEM in JSON, {"ca","cert","key"}) and kubeconfigs (the workload and management
// clusters', as the kubeconfig's own text). Each is read once and cached per container.
// Nothing here logs, and no error carries the secret's text (not even a JSON parse message, which
// quotes the input): errors name the secret's ARN and the problem only.
/** Where a cluster's secrets are named by default: the stack's functions may read only `etcd-remediator/*` unless told otherwise. */
export const SECRET_NAME_PREFIX = 'etcd-remediator/';

import { GetSecretValueCommand, type GetSecretValueCommandOutput } from '@aws-sdk/client-secrets-manager';
import type { TlsFiles } from '../../ports/etcd.ts';
import { cached } from './cache.ts';
import { redacted } from './redacted.ts';

export { redacted } from './redacted.ts';

export interface SecretSource {
  tlsFiles(secretArn: string): Promise<TlsFiles>;
  /** A kubeconfig kept as its text (YAML or JSON), as `kubectl config view --raw` prints it. */
  kubeconfig(secretArn: string): Promise<string>;
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
  // Concurrent callers share one request; a failure, of the call or of the check, is not kept.
  const read = <T>(parse: (secretArn: string, text: string) => T) =>
    cached(cacheMs, clock, async (secretArn) => parse(secretArn, await fetchText(client, secretArn)));
  return { tlsFiles: read(parseTlsSecret), kubeconfig: read(parseKubeconfigSecret) };
}

async function fetchText(client: SecretsClient, secretArn: string): Promise<string> {
  let output: GetSecretValueCommandOutput;
  try {
    output = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
  } catch (error) {
    // The service's own words (not found, access denied) never quote a secret's value.
    const name = error instanceof Error ? error.name : 'Error';
    const message = error instanceof Error ? error.message : String(error);
    throw new SecretError(secretArn, `GetSecretValue failed: ${name}: ${message}`);
  }
  return secretText(secretArn, output);
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
    if (typeof value !== 'string')
      throw new SecretError(secretArn, `field ${field}: expected a string, got ${Array.isArray(value) ? 'an array' : typeof value}`);
    if (!pattern.test(value)) throw new SecretError(secretArn, `field ${field}: is not ${what} in PEM`);
    return value;
  };
  const ca = pem('ca', CERTIFICATE, 'a certificate');
  if (ca === undefined) throw new SecretError(secretArn, `field ca: missing (${SHAPE})`);
  const cert = pem('cert', CERTIFICATE, 'a certificate');
  const key = pem('key', PRIVATE_KEY, 'a private key');
  if ((cert === undefined) !== (key === undefined))
    throw new SecretError(secretArn, `fields cert and key: give both or neither (${cert ? 'key' : 'cert'} is missing)`);
  return redacted(
    { ca: Buffer.from(ca), ...(cert && key ? { cert: Buffer.from(cert), key: Buffer.from(key) } : {}) },
    `[TlsFiles: ca${cert ? ', cert, key' : ''}; redacted]`,
  );
}

const KUBECONFIG_SHAPE = 'expected a kubeconfig as its YAML or JSON text, with clusters, users and contexts';
/** A top-level `clusters:` key in YAML. */
const YAML_CLUSTERS = /^clusters\s*:/m;
/** A whole value of base64 (a Kubernetes Secret's data.value copied as it is). */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Exported for tests. Checks the shape only (the kube adapter parses it), so a TLS secret or an
 * encoded kubeconfig given by mistake is named here; every message says what is wrong, never what is there.
 */
export function parseKubeconfigSecret(secretArn: string, text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') throw new SecretError(secretArn, `is empty (${KUBECONFIG_SHAPE})`);
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new SecretError(secretArn, `is not a kubeconfig: it starts as JSON but is not JSON (${KUBECONFIG_SHAPE})`);
    }
    const clusters = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).clusters : undefined;
    if (!Array.isArray(clusters)) throw new SecretError(secretArn, `is not a kubeconfig: JSON without a clusters list (${KUBECONFIG_SHAPE})`);
    return text;
  }
  if (YAML_CLUSTERS.test(text)) return text;
  if (BASE64.test(trimmed.replace(/\s+/g, '')) && YAML_CLUSTERS.test(Buffer.from(trimmed, 'base64').toString('utf8'))) {
    throw new SecretError(
      secretArn,
      'holds a base64-encoded kubeconfig: store the decoded text (a Kubernetes Secret’s data.value is encoded; `kubectl get secret … -o jsonpath={.data.value} | base64 -d`)',
    );
  }
  throw new SecretError(secretArn, `is not a kubeconfig: no top-level clusters (${KUBECONFIG_SHAPE})`);
}
