// What a TLS failure's text blames, and which of the user's files to fix: said after etcd's (Node's)
// own words, naming the flag or config field and the path as the user wrote them.
import { X509Certificate } from 'node:crypto';
import type { TlsFiles } from '../../ports/etcd.ts';

/** A certificate of the server's chain (its own, or the CA's) is out of its validity, as Node words it. */
const OUT_OF_VALIDITY = /certificate has expired|certificate is not yet valid|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID/i;
/** The server's certificate did not verify against our CA. */
const SERVER_UNVERIFIED = /self[- ]signed|unable to (get|verify)|UNABLE_TO_|certificate verify failed|CERT_(UNTRUSTED|SIGNATURE_FAILURE)/i;
/** The server turned our client certificate away. */
const CLIENT_REFUSED =
  /alert (bad certificate|unknown ca|certificate required|certificate unknown|certificate expired|unsupported certificate)|certificate required|bad certificate/i;
const HOST_MISMATCH = /altnames|ERR_TLS_CERT_ALTNAME_INVALID|does not match certificate/i;

/** Which side of a TLS handshake a failure's text blames: our CA, our client certificate, or the server certificate's names. */
export function tlsFaultOf(message: string): 'out-of-validity' | 'server-unverified' | 'client-refused' | 'host-mismatch' | undefined {
  if (OUT_OF_VALIDITY.test(message)) return 'out-of-validity';
  if (SERVER_UNVERIFIED.test(message)) return 'server-unverified';
  if (CLIENT_REFUSED.test(message)) return 'client-refused';
  if (HOST_MISMATCH.test(message)) return 'host-mismatch';
  return undefined;
}

/** The validity of a PEM certificate, or undefined when it does not parse. */
function validityOf(pem: Buffer | undefined): { from: Date; to: Date } | undefined {
  if (!pem) return undefined;
  try {
    const cert = new X509Certificate(pem);
    return { from: new Date(cert.validFrom), to: new Date(cert.validTo) };
  } catch {
    return undefined;
  }
}

/** Out of validity: the CA the user gave, when it is the one; else the server's own certificate. */
function outOfValidityHint(ca: string, caPem: Buffer | undefined, now: Date): string {
  const validity = validityOf(caPem);
  if (validity && now > validity.to) return `the CA in ${ca} expired on ${validity.to.toISOString()}: renew the etcd CA and give the new one`;
  if (validity && now < validity.from) return `the CA in ${ca} is not valid before ${validity.from.toISOString()}: check this machine's clock`;
  const until = validity ? ` (the CA in ${ca} is valid until ${validity.to.toISOString()})` : '';
  return `the server's certificate has expired or is not yet valid${until}: renew it (kubeadm certs renew etcd-server), or check the clocks`;
}

/** Which of the user's files a TLS failure points at, said after etcd's own words. `caPem` tells an expired CA from an expired server certificate. */
export function tlsHint(message: string, sources: NonNullable<TlsFiles['sources']>, caPem?: Buffer, now = new Date()): string {
  const client = sources.cert !== undefined && sources.key !== undefined ? `${sources.cert} (with ${sources.key})` : undefined;
  const fault = tlsFaultOf(message);
  if (fault === 'out-of-validity') return outOfValidityHint(sources.ca, caPem, now);
  if (fault === 'server-unverified') return `the server's certificate is not signed by the CA in ${sources.ca}: fix ${sources.ca}`;
  if (fault === 'client-refused') {
    return client
      ? `the server refused the client certificate ${client}: it is not signed by a CA the server trusts; fix ${sources.cert}`
      : `the server requires a client certificate: give --cert and --key (or tls.cert and tls.key)`;
  }
  if (fault === 'host-mismatch') return `the server's certificate does not name this endpoint's host; the CA is ${sources.ca}`;
  return `check ${[sources.ca, sources.cert, sources.key].filter(Boolean).join(', ')}`;
}
