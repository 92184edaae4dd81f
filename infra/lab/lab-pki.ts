// Certificates for a lab that serves clients over TLS, made with openssl, shaped as kubeadm and
// Cluster API make an etcd PKI:
//  - the CA: RSA 2048 with a PKCS#1 key ("RSA PRIVATE KEY"), as Cluster API writes the
//    `<cluster>-etcd` Secret (util/secret newCertificateAuthority, certs.EncodePrivateKeyPEM);
//  - a member's server certificate: CN the member's name, SANs localhost, the name, 127.0.0.1 and
//    ::1, server and client auth (kubeadm's etcd/server.crt; etcd's own gateway dials the member
//    with it, so it needs client auth too);
//  - client certificates: client auth only (kubeadm's etcd/healthcheck-client.crt).
// Leaves use ECDSA P-256 (kubeadm's ECDSA-P256 algorithm): an RSA key costs ~150 ms of CPU each,
// and a lab makes several.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ClientTls } from './http-json.ts';
import type { LabTlsFiles } from './lab-types.ts';

const run = promisify(execFile);

export interface PemPair {
  certFile: string;
  keyFile: string;
}

export interface LeafProfile {
  commonName: string;
  organization?: string;
  /** server: serverAuth and clientAuth (a member); client: clientAuth only. */
  usage: 'server' | 'client';
  dnsNames?: readonly string[];
  ips?: readonly string[];
}

const DAYS = '365';
// A config with no defaults of its own: every extension comes from -addext, whatever the
// system's openssl.cnf says (its v3_ca section would make a leaf a CA).
const BARE_CONFIG = '[req]\ndistinguished_name = dn\n[dn]\n';

async function openssl(dir: string, args: string[]): Promise<void> {
  try {
    await run('openssl', args, { cwd: dir });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`openssl ${args[0] ?? ''} in ${dir} failed: ${stderr.trim() || (error as Error).message}`, { cause: error });
  }
}

/** Kept beside the CA, so a leaf's folder holds its certificate and key only. */
function bareConfig(caDir: string): string {
  const file = path.join(caDir, 'openssl-bare.cnf');
  if (!fs.existsSync(file)) fs.writeFileSync(file, BARE_CONFIG);
  return file;
}

/** "/O=a/CN=b", with openssl's escapes for the separators a name may hold. */
function subject(profile: { commonName: string; organization?: string }): string {
  const escape = (value: string) => value.replace(/[\\/,+=]/g, (c) => `\\${c}`);
  return `${profile.organization ? `/O=${escape(profile.organization)}` : ''}/CN=${escape(profile.commonName)}`;
}

/** Where the certificate and key named `name` are kept in `dir`: `<name>.crt` and `<name>.key`. */
export const pemPairIn = (dir: string, name: string): PemPair => ({ certFile: path.join(dir, `${name}.crt`), keyFile: path.join(dir, `${name}.key`) });

/** A self-signed CA in `dir`: `<name>.crt` and `<name>.key` (mode 0600). */
export async function makeCa(dir: string, name: string, commonName = 'etcd-ca'): Promise<PemPair> {
  fs.mkdirSync(dir, { recursive: true });
  const pair = pemPairIn(dir, name);
  await openssl(dir, ['genrsa', '-traditional', '-out', pair.keyFile, '2048']);
  await openssl(dir, [
    'req',
    '-x509',
    '-config',
    bareConfig(dir),
    '-key',
    pair.keyFile,
    '-subj',
    subject({ commonName }),
    '-days',
    '3650',
    '-addext',
    'basicConstraints=critical,CA:TRUE,pathlen:0',
    '-addext',
    'keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign',
    '-out',
    pair.certFile,
  ]);
  return pair;
}

/** A leaf signed by `ca`, in `dir`: `<name>.crt` and `<name>.key` (mode 0600). */
export async function issueCert(ca: PemPair, dir: string, name: string, profile: LeafProfile): Promise<PemPair> {
  fs.mkdirSync(dir, { recursive: true });
  const pair = pemPairIn(dir, name);
  const sans = [...(profile.dnsNames ?? []).map((d) => `DNS:${d}`), ...(profile.ips ?? []).map((ip) => `IP:${ip}`)];
  await openssl(dir, [
    'req',
    '-x509',
    '-config',
    bareConfig(path.dirname(ca.certFile)),
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    subject(profile),
    '-days',
    DAYS,
    '-addext',
    'basicConstraints=critical,CA:FALSE',
    '-addext',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    '-addext',
    `extendedKeyUsage=${profile.usage === 'server' ? 'serverAuth,clientAuth' : 'clientAuth'}`,
    ...(sans.length > 0 ? ['-addext', `subjectAltName=${sans.join(',')}`] : []),
    '-keyout',
    pair.keyFile,
    '-out',
    pair.certFile,
  ]);
  return pair;
}

/** A member's server certificate, as kubeadm names its etcd/server.crt. */
export const memberServerProfile = (memberName: string): LeafProfile => ({
  commonName: memberName,
  usage: 'server',
  dnsNames: ['localhost', memberName],
  ips: ['127.0.0.1', '::1'],
});

/** A lab's PKI under `dir`: its CA and the client certificate the lab asks its own questions with. */
export async function makeLabPki(dir: string): Promise<LabTlsFiles> {
  const ca = await makeCa(dir, 'ca');
  const client = await issueCert(ca, dir, 'lab-client', { commonName: 'etcd-lab-client', usage: 'client' });
  return { caFile: ca.certFile, caKeyFile: ca.keyFile, certFile: client.certFile, keyFile: client.keyFile };
}

/** The lab's client credentials as an https request takes them. */
export const readClientTls = (files: LabTlsFiles): ClientTls => ({
  ca: fs.readFileSync(files.caFile),
  cert: fs.readFileSync(files.certFile),
  key: fs.readFileSync(files.keyFile),
});
