// The TLS files of a cluster, read and checked once at start-up: each is parsed as PEM and the key
// must match the certificate, so a wrong file is named (flag or config field, and path) before any
// call is made. The messages never quote the files' contents.
import crypto from 'node:crypto';
import type { TlsFiles } from '../../functions/ports/etcd.ts';
import { InputFileError, readInputFile } from './input-file.ts';

export type TlsField = 'cacert' | 'cert' | 'key';

/** A path per field, and how a message names the field (`--cacert F`, `clusters[0].tls.cacert F`). */
export interface TlsPaths {
  cacert: string;
  cert?: string | undefined;
  key?: string | undefined;
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

const PEM_CERT = /-----BEGIN CERTIFICATE-----/;

/**
 * Reads and checks the files; `resolve` turns a path as written into one to read, `name` says how
 * a message names a field and its path, and `fail` makes the error to throw.
 */
export function readTlsFiles(
  paths: TlsPaths,
  words: { resolve?: (file: string) => string; name: (field: TlsField, file: string) => string; fail: (message: string) => Error },
): TlsFiles {
  const resolve = words.resolve ?? ((f: string) => f);
  // PEM pasted where a path belongs: saying "cannot read <path>" would print the key itself.
  for (const field of ['cacert', 'cert', 'key'] as const) {
    const given = paths[field];
    if (given !== undefined && (/-----BEGIN|[\r\n]/.test(given) || given.length > 1024)) {
      throw words.fail(
        `${words.name(field, '(not shown)')}: is PEM text or a very long value, not a file path; save it to a file (mode 600) and give the file's path`,
      );
    }
  }
  const read = (field: TlsField, file: string): Buffer => {
    try {
      return readInputFile(resolve(file)).data;
    } catch (error) {
      throw words.fail(`${words.name(field, file)}: ${error instanceof InputFileError ? error.message : `cannot read: ${firstLine(error)}`}`);
    }
  };
  const certificates = (field: TlsField, file: string, data: Buffer): crypto.X509Certificate[] => {
    const text = data.toString('utf8');
    if (!PEM_CERT.test(text)) throw words.fail(`${words.name(field, file)}: is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" block)`);
    const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
    if (blocks.length === 0) throw words.fail(`${words.name(field, file)}: is not a PEM certificate (a BEGIN CERTIFICATE block has no END)`);
    return blocks.map((block, i) => {
      try {
        return new crypto.X509Certificate(block);
      } catch (error) {
        throw words.fail(`${words.name(field, file)}: certificate ${i + 1} cannot be parsed: ${firstLine(error)}`);
      }
    });
  };

  const ca = read('cacert', paths.cacert);
  certificates('cacert', paths.cacert, ca);
  const sources: NonNullable<TlsFiles['sources']> = { ca: words.name('cacert', paths.cacert) };
  if (paths.cert === undefined || paths.key === undefined) return { ca, sources };

  const cert = read('cert', paths.cert);
  const [leaf] = certificates('cert', paths.cert, cert);
  const key = read('key', paths.key);
  let privateKey: crypto.KeyObject;
  try {
    privateKey = crypto.createPrivateKey(key);
  } catch (error) {
    const why = /BEGIN [A-Z ]*PRIVATE KEY/.test(key.toString('utf8'))
      ? `cannot be parsed (${firstLine(error)}; an encrypted key is not supported)`
      : 'is not a PEM private key (no "-----BEGIN … PRIVATE KEY-----" block)';
    throw words.fail(`${words.name('key', paths.key)}: ${why}`);
  }
  if (!leaf!.checkPrivateKey(privateKey)) {
    throw words.fail(
      `${words.name('key', paths.key)}: does not match the certificate in ${words.name('cert', paths.cert)} (subject ${leaf!.subject.replace(/\n/g, ', ')}); give the key that certificate was issued for`,
    );
  }
  const now = Date.now();
  if (Date.parse(leaf!.validTo) < now) throw words.fail(`${words.name('cert', paths.cert)}: expired on ${new Date(leaf!.validTo).toISOString()}`);
  sources.cert = words.name('cert', paths.cert);
  sources.key = words.name('key', paths.key);
  return { ca, cert, key, sources };
}
