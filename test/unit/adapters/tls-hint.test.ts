// Which file a TLS failure points at: said after etcd's (grpc-js's) own words, naming the flag or
// config field and the path as the user wrote them.
import { describe, expect, it } from 'vitest';
import { tlsHint } from '../../../functions/adapters/etcd/member-client.ts';

const flags = { ca: '--cacert /etc/ca.pem', cert: '--cert /etc/client.pem', key: '--key /etc/client-key.pem' };

describe('tlsHint', () => {
  it.each([
    ['Error: unable to verify the first certificate', "the server's certificate is not signed by the CA in --cacert /etc/ca.pem: fix --cacert /etc/ca.pem"],
    ['Error: self-signed certificate in certificate chain', "the server's certificate is not signed by the CA in --cacert /etc/ca.pem: fix --cacert /etc/ca.pem"],
    ['ssl3_read_bytes:ssl/tls alert bad certificate:SSL alert number 42', 'the server refused the client certificate --cert /etc/client.pem (with --key /etc/client-key.pem): it is not signed by a CA the server trusts; fix --cert /etc/client.pem'],
    ['ssl/tls alert unknown ca', 'the server refused the client certificate --cert /etc/client.pem (with --key /etc/client-key.pem): it is not signed by a CA the server trusts; fix --cert /etc/client.pem'],
    ["Hostname/IP does not match certificate's altnames", "the server's certificate does not name this endpoint's host; the CA is --cacert /etc/ca.pem"],
    ['wrong version number', 'check --cacert /etc/ca.pem, --cert /etc/client.pem, --key /etc/client-key.pem'],
  ])('%s', (message, hint) => {
    expect(tlsHint(message, flags)).toBe(hint);
  });

  it('without a client certificate, says one is needed', () => {
    expect(tlsHint('alert certificate required', { ca: 'clusters[0].tls.cacert ca.pem' })).toBe('the server requires a client certificate: give --cert and --key (or tls.cert and tls.key)');
  });
});
