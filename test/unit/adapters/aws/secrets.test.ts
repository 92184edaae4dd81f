// The etcd credentials from Secrets Manager, through a fake client: parsed, cached per container,
// and never shown: not in any log line, not in any error message, not when the result is printed.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import type { GetSecretValueCommand, GetSecretValueCommandOutput } from '@aws-sdk/client-secrets-manager';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createSecretsManagerSource,
  parseKubeconfigSecret,
  parseTlsSecret,
  SecretError,
  type SecretsClient,
} from '../../../../functions/adapters/aws/secrets.ts';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-prod-AbCdEf';
const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const certificate = (seed: string) => `-----BEGIN CERTIFICATE-----\n${randomBytes(300).toString('base64')}${seed}\n-----END CERTIFICATE-----\n`;
const ca = certificate('CA');
const cert = certificate('CLIENT');
/** Lines of key material that must never appear anywhere. */
const secretLines = [key, ca, cert].flatMap((pem) => pem.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----')));

interface Fake extends SecretsClient {
  calls: string[];
}

function fakeClient(answer: (secretId: string) => Partial<GetSecretValueCommandOutput> | Error): Fake {
  const calls: string[] = [];
  return {
    calls,
    send: async (command: GetSecretValueCommand) => {
      const id = command.input.SecretId ?? '';
      calls.push(id);
      const result = answer(id);
      if (result instanceof Error) throw result;
      return { $metadata: {}, ...result };
    },
  };
}

const json = (value: unknown) => ({ SecretString: JSON.stringify(value) });

describe('Secrets Manager source', () => {
  it('reads the CA, client certificate and key as PEM buffers', async () => {
    const source = createSecretsManagerSource(fakeClient(() => json({ ca, cert, key })));
    const files = await source.tlsFiles(ARN);
    expect(files.ca.toString()).toBe(ca);
    expect(files.cert?.toString()).toBe(cert);
    expect(files.key?.toString()).toBe(key);
  });

  it('a CA alone is enough (server-only TLS); SecretBinary works as SecretString does', async () => {
    const source = createSecretsManagerSource(fakeClient(() => ({ SecretBinary: new TextEncoder().encode(JSON.stringify({ ca })) })));
    const files = await source.tlsFiles(ARN);
    expect(files.ca.toString()).toBe(ca);
    expect(files.cert).toBeUndefined();
    expect(files.key).toBeUndefined();
  });

  it('asks once per container and secret, concurrent callers included, until cacheMs passes', async () => {
    let now = 0;
    const client = fakeClient(() => json({ ca, cert, key }));
    const source = createSecretsManagerSource(client, { cacheMs: 1_000, clock: () => now });
    await Promise.all([source.tlsFiles(ARN), source.tlsFiles(ARN), source.tlsFiles(ARN)]);
    now = 999;
    await source.tlsFiles(ARN);
    expect(client.calls).toEqual([ARN]);
    await source.tlsFiles(`${ARN}-other`);
    now = 1_000;
    await source.tlsFiles(ARN);
    expect(client.calls).toEqual([ARN, `${ARN}-other`, ARN]);
  });

  it('a failure is not cached: the next call asks again', async () => {
    let fail = true;
    const client = fakeClient(() => (fail ? Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }) : json({ ca })));
    const source = createSecretsManagerSource(client);
    await expect(source.tlsFiles(ARN)).rejects.toThrow(`secret ${ARN}: GetSecretValue failed: ThrottlingException: Rate exceeded`);
    fail = false;
    await expect(source.tlsFiles(ARN)).resolves.toBeDefined();
    expect(client.calls).toHaveLength(2);
  });

  describe('refuses a bad secret, naming the ARN and the problem only', () => {
    const cases: [string, Partial<GetSecretValueCommandOutput>, string][] = [
      ['not JSON (the PEM pasted as is)', { SecretString: `${ca}${cert}${key}` }, 'is not JSON (expected JSON {"ca": PEM, "cert": PEM, "key": PEM})'],
      ['JSON cut short', { SecretString: JSON.stringify({ ca, cert, key }).slice(0, -40) }, 'is not JSON'],
      ['an array', json([ca, cert, key]), 'is not a JSON object'],
      ['no value', {}, 'holds no value'],
      ['no CA', json({ cert, key }), 'field ca: missing'],
      ['a CA that is not PEM', json({ ca: 'not a certificate', cert, key }), 'field ca: is not a certificate in PEM'],
      ['a key where the certificate goes', json({ ca, cert: key, key }), 'field cert: is not a certificate in PEM'],
      ['a certificate where the key goes', json({ ca, cert, key: cert }), 'field key: is not a private key in PEM'],
      ['a key that is not a string', json({ ca, cert, key: { pem: key } }), 'field key: expected a string, got object'],
      ['a certificate without its key', json({ ca, cert }), 'fields cert and key: give both or neither (key is missing)'],
      ['a key without its certificate', json({ ca, key }), 'fields cert and key: give both or neither (cert is missing)'],
    ];
    for (const [what, answer, problem] of cases) {
      it(what, async () => {
        const error: unknown = await createSecretsManagerSource(fakeClient(() => answer))
          .tlsFiles(ARN)
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SecretError);
        const message = (error as SecretError).message;
        expect(message.startsWith(`secret ${ARN}: `)).toBe(true);
        expect(message).toContain(problem);
        expect((error as SecretError).secretArn).toBe(ARN);
        const shown = `${message}\n${(error as Error).stack}\n${inspect(error)}\n${JSON.stringify(error)}`;
        expect(shown).not.toContain('-----BEGIN');
        for (const line of secretLines) expect(shown).not.toContain(line);
      });
    }
  });

  describe('never shows key material', () => {
    const captured: string[] = [];
    beforeEach(() => {
      captured.length = 0;
      const capture = (...args: unknown[]) => {
        captured.push(args.map((a) => (typeof a === 'string' ? a : inspect(a))).join(' '));
      };
      for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) vi.spyOn(console, method).mockImplementation(capture);
      const write = (chunk: unknown) => {
        capture(String(chunk));
        return true;
      };
      vi.spyOn(process.stdout, 'write').mockImplementation(write);
      vi.spyOn(process.stderr, 'write').mockImplementation(write);
    });
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('logs nothing, in success or failure, and prints the result redacted', async () => {
      const good = createSecretsManagerSource(fakeClient(() => json({ ca, cert, key })));
      const files = await good.tlsFiles(ARN);
      const bad = createSecretsManagerSource(fakeClient(() => ({ SecretString: `{"ca": ${JSON.stringify(ca)}, "key": ${JSON.stringify(key)}` })));
      const error = await bad.tlsFiles(ARN).catch((e: unknown) => e);
      // What a careless caller might do with either: both must come out clean.
      console.log('loaded', files, { cluster: { tls: files } });
      console.error('failed', error);
      process.stdout.write(`${JSON.stringify({ tls: files })}\n`);
      vi.restoreAllMocks();
      const all = captured.join('\n');
      expect(all).toContain('[TlsFiles: ca, cert, key; redacted]');
      expect(all).not.toContain('-----BEGIN');
      for (const line of secretLines) expect(all).not.toContain(line);
    });

    it('parseTlsSecret keeps the buffers usable while hiding them from JSON and inspect', () => {
      const files = parseTlsSecret(ARN, JSON.stringify({ ca, cert, key }));
      expect(JSON.stringify(files)).toBe('"[TlsFiles: ca, cert, key; redacted]"');
      expect(inspect(files)).toBe('[TlsFiles: ca, cert, key; redacted]');
      expect(Object.keys(files)).toEqual(['ca', 'cert', 'key']);
      expect(files.key?.toString()).toBe(key);
    });
  });
});

describe('kubeconfigs from Secrets Manager', () => {
  const KUBE_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:etcd-remediator/prod-kubeconfig-AbCdEf';
  const token = `token-${randomBytes(12).toString('hex')}`;
  const yaml = `apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: https://prod.example:6443\nusers:\n- name: remediator\n  user:\n    token: ${token}\ncontexts:\n- name: prod\n  context: {cluster: prod, user: remediator}\ncurrent-context: prod\n`;
  const asJson = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'prod', cluster: { server: 'https://prod.example:6443' } }],
    users: [{ name: 'u', user: { token } }],
  });

  it('reads the kubeconfig as its text, YAML or JSON, SecretBinary too', async () => {
    expect(await createSecretsManagerSource(fakeClient(() => ({ SecretString: yaml }))).kubeconfig(KUBE_ARN)).toBe(yaml);
    expect(await createSecretsManagerSource(fakeClient(() => ({ SecretString: asJson }))).kubeconfig(KUBE_ARN)).toBe(asJson);
    expect(await createSecretsManagerSource(fakeClient(() => ({ SecretBinary: new TextEncoder().encode(yaml) }))).kubeconfig(KUBE_ARN)).toBe(yaml);
  });

  it('is cached as the TLS credentials are: one request per secret until cacheMs passes; a failure is not kept', async () => {
    let now = 0;
    let fail = true;
    const client = fakeClient((id) =>
      id === KUBE_ARN && fail
        ? Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })
        : id === KUBE_ARN
          ? { SecretString: yaml }
          : json({ ca }),
    );
    const source = createSecretsManagerSource(client, { cacheMs: 1_000, clock: () => now });
    await expect(source.kubeconfig(KUBE_ARN)).rejects.toThrow(`secret ${KUBE_ARN}: GetSecretValue failed: ThrottlingException: Rate exceeded`);
    fail = false;
    await Promise.all([source.kubeconfig(KUBE_ARN), source.kubeconfig(KUBE_ARN), source.tlsFiles(ARN)]);
    now = 999;
    await Promise.all([source.kubeconfig(KUBE_ARN), source.tlsFiles(ARN)]);
    expect(client.calls).toEqual([KUBE_ARN, KUBE_ARN, ARN]);
    now = 1_000;
    await source.kubeconfig(KUBE_ARN);
    expect(client.calls).toEqual([KUBE_ARN, KUBE_ARN, ARN, KUBE_ARN]);
  });

  describe('refuses what is no kubeconfig, naming the ARN and the problem only', () => {
    const cases: [string, Partial<GetSecretValueCommandOutput>, string][] = [
      ['empty', { SecretString: '  \n' }, 'is empty (expected a kubeconfig as its YAML or JSON text'],
      ['no value', {}, 'holds no value'],
      ['the TLS JSON by mistake', json({ ca, cert, key }), 'is not a kubeconfig: JSON without a clusters list'],
      ['JSON cut short', { SecretString: asJson.slice(0, -20) }, 'is not a kubeconfig: it starts as JSON but is not JSON'],
      ['YAML without clusters', { SecretString: `users:\n- name: u\n  user:\n    token: ${token}\n` }, 'is not a kubeconfig: no top-level clusters'],
      ['a PEM key', { SecretString: key }, 'is not a kubeconfig: no top-level clusters'],
      [
        'base64, as a Kubernetes Secret’s data.value holds it',
        { SecretString: Buffer.from(yaml).toString('base64') },
        'holds a base64-encoded kubeconfig: store the decoded text',
      ],
      ['base64 wrapped at 76 columns', { SecretString: Buffer.from(yaml).toString('base64').replace(/.{76}/g, '$&\n') }, 'holds a base64-encoded kubeconfig'],
    ];
    it.each(cases)('%s', async (_, answer, problem) => {
      const error: unknown = await createSecretsManagerSource(fakeClient(() => answer))
        .kubeconfig(KUBE_ARN)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SecretError);
      const message = (error as SecretError).message;
      expect(message.startsWith(`secret ${KUBE_ARN}: `)).toBe(true);
      expect(message).toContain(problem);
      const shown = `${message}\n${(error as Error).stack}\n${inspect(error)}\n${JSON.stringify(error)}`;
      expect(shown).not.toContain(token);
      expect(shown).not.toContain('-----BEGIN');
      for (const line of secretLines) expect(shown).not.toContain(line);
    });
  });

  it('parseKubeconfigSecret keeps the text as it is', () => {
    expect(parseKubeconfigSecret(KUBE_ARN, `\n${yaml}`)).toBe(`\n${yaml}`);
  });
});
