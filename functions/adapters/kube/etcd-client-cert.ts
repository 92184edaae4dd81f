// An etcd client certificate minted from the cluster's etcd CA, as KCP mints its own
// (cluster-api controlplane/kubeadm/internal: generateClientCert, newClientCert; util/certs):
// CN `cluster-api.x-k8s.io`, key usage digitalSignature, extended key usage clientAuth, an RSA
// 2048 key, NotBefore five minutes back for clock skew. Where short-lived is safer we differ: it
// is valid for an hour (KCP: ten years), its key is new with each certificate (KCP keeps one per
// cluster), and its serial is random (KCP: 0; RFC 5280 wants positive, unique serials).
// Everything stays in memory.
// @peculiar/x509 resolves its parts through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { createPrivateKey, generateKeyPair, randomBytes, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import * as x509 from '@peculiar/x509';

export const CLIENT_CERT_CN = 'cluster-api.x-k8s.io';
export const CLIENT_CERT_VALIDITY_MS = 60 * 60_000;
/** A server whose clock is behind ours still accepts it (KCP's margin). */
export const CLIENT_CERT_BACKDATE_MS = 5 * 60_000;
const RSA_BITS = 2048;

export interface MintedCertificate {
  /** PEM. */
  cert: Buffer;
  /** PEM (PKCS#8). */
  key: Buffer;
  notAfter: Date;
  /** The CA certificate's own end, for messages about an expired certificate. */
  caNotAfter: Date;
}

/** The CA can sign nothing we trust it to: a mismatched pair, an unknown key type, a bad PEM. */
export class UnusableCaError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UnusableCaError';
  }
}

type SigningAlgorithm = webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams;

/** Go's x509.CreateCertificate defaults for the CA's key: SHA-256 for RSA and P-256, larger hashes for larger curves. */
const CURVES: Readonly<Record<string, { namedCurve: string; hash: string }>> = {
  prime256v1: { namedCurve: 'P-256', hash: 'SHA-256' },
  secp384r1: { namedCurve: 'P-384', hash: 'SHA-384' },
  secp521r1: { namedCurve: 'P-521', hash: 'SHA-512' },
};

function signingAlgorithm(key: KeyObject): { importAs: SigningAlgorithm; sign: webcrypto.Algorithm | webcrypto.EcdsaParams } {
  if (key.asymmetricKeyType === 'rsa') return { importAs: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, sign: { name: 'RSASSA-PKCS1-v1_5' } };
  const curve = key.asymmetricKeyType === 'ec' ? CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''] : undefined;
  if (curve) return { importAs: { name: 'ECDSA', namedCurve: curve.namedCurve }, sign: { name: 'ECDSA', hash: curve.hash } };
  const type = key.asymmetricKeyType === 'ec' ? `EC ${key.asymmetricKeyDetails?.namedCurve ?? ''}`.trim() : (key.asymmetricKeyType ?? 'unknown');
  throw new UnusableCaError(`its private key is ${type}; a CA key must be RSA or ECDSA P-256, P-384 or P-521`);
}

/** A positive 128-bit serial (the top bit clear, so DER needs no sign byte; never zero). */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

const generateRsa = promisify(generateKeyPair);

/** A client certificate signed by the CA (`caCert`, `caKey` as PEM), valid from `now` − 5 min for an hour. */
export async function mintClientCertificate(caCert: Buffer, caKey: Buffer, now: Date = new Date()): Promise<MintedCertificate> {
  let ca: X509Certificate;
  let signer: KeyObject;
  try {
    ca = new X509Certificate(caCert);
    signer = createPrivateKey(caKey);
  } catch (error) {
    throw new UnusableCaError(`its certificate or key is not PEM that parses (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  if (!ca.checkPrivateKey(signer)) throw new UnusableCaError('its private key does not belong to its certificate');
  if (!ca.ca) throw new UnusableCaError('its certificate is not a CA certificate (basicConstraints CA:FALSE)');
  // No member would take a certificate under a CA out of its validity, and TLS would only say "certificate has expired".
  if (ca.validToDate <= now) throw new UnusableCaError(`its certificate expired on ${ca.validToDate.toISOString()}; renew the etcd CA`);
  if (ca.validFromDate > now) throw new UnusableCaError(`its certificate is not valid before ${ca.validFromDate.toISOString()}; check this machine's clock`);
  const { importAs, sign } = signingAlgorithm(signer);
  const signingKey = signer.toCryptoKey(importAs, false, ['sign']);
  const { publicKey, privateKey } = await generateRsa('rsa', { modulusLength: RSA_BITS });
  const issuer = new x509.X509Certificate(caCert);
  const caKeyId = issuer.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  const notAfter = new Date(now.getTime() + CLIENT_CERT_VALIDITY_MS);
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerial(),
      // The CA's subject as it is encoded: chain building compares the bytes.
      issuer: issuer.subjectName,
      subject: `CN=${CLIENT_CERT_CN}`,
      notBefore: new Date(now.getTime() - CLIENT_CERT_BACKDATE_MS),
      notAfter,
      signingAlgorithm: sign,
      publicKey: publicKey.toCryptoKey({ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['verify']),
      signingKey,
      extensions: [
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
        ...(caKeyId ? [new x509.AuthorityKeyIdentifierExtension(caKeyId)] : []),
      ],
    },
    webcrypto,
  );
  return {
    cert: Buffer.from(cert.toString('pem')),
    key: Buffer.from(privateKey.export({ type: 'pkcs8', format: 'pem' })),
    notAfter,
    caNotAfter: ca.validToDate,
  };
}
