// TLS channel credentials for one etcd endpoint. grpc-js always sends the channel's host as the
// TLS server name (SNI), an IP address included, which RFC 6066 forbids and for which Node prints
// DEP0123 on the first such connection. Here an IP host sends no server name; the certificate is
// still checked against the host (Node falls back to `host`, which matches IP SANs).
// It overrides grpc-js's _createSecureConnector, an internal hook with no public equivalent, so
// package.json pins grpc-js to one minor version (~), and the TLS tests are the first to say so
// if an update changes it.
import net from 'node:net';
import tls from 'node:tls';
import { CallCredentials, ChannelCredentials } from '@grpc/grpc-js';
import type { TlsFiles } from '../../ports/etcd.ts';

type SecureConnector = ReturnType<ChannelCredentials['_createSecureConnector']>;
type SecureConnectResult = Awaited<ReturnType<SecureConnector['connect']>>;

/** The host of an endpoint URL as TLS sees it: without brackets around an IPv6 address. */
export const tlsHostOf = (endpoint: string): string => new URL(endpoint).hostname.replace(/^\[(.*)\]$/, '$1');

/** The server name to send for `host`: none for an IP address. */
export const serverNameFor = (host: string): string | undefined => (net.isIP(host) === 0 ? host : undefined);

class EndpointTlsCredentials extends ChannelCredentials {
  private readonly context: tls.SecureContext;
  private readonly host: string;
  constructor(files: TlsFiles | undefined, host: string) {
    super();
    this.host = host;
    // No CA given: Node's default roots, as grpc-js would use.
    this.context = tls.createSecureContext({ ...(files ? { ca: files.ca } : {}), ...(files?.cert && files.key ? { cert: files.cert, key: files.key } : {}) });
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(_target: unknown, _options: unknown, callCredentials?: CallCredentials): SecureConnector {
    const servername = serverNameFor(this.host);
    const options: tls.ConnectionOptions = { secureContext: this.context, host: this.host, ALPNProtocols: ['h2'], ...(servername ? { servername } : {}) };
    return {
      connect: (socket) =>
        new Promise<SecureConnectResult>((resolve, reject) => {
          const secured = tls.connect({ ...options, socket }, () => {
            // Verification failures end the handshake with an error first; this is a backstop.
            if (!secured.authorized) reject(secured.authorizationError ?? new Error('TLS peer not authorized'));
            else resolve({ socket: secured, secure: true });
          });
          secured.on('error', reject);
        }),
      waitForReady: () => Promise.resolve(),
      getCallCredentials: () => callCredentials ?? CallCredentials.createEmpty(),
      destroy: () => undefined,
    };
  }
}

/** Credentials for https `endpoint`, with the cluster's CA and client certificate when given. */
export function endpointTlsCredentials(endpoint: string, files?: TlsFiles): ChannelCredentials {
  return new EndpointTlsCredentials(files, tlsHostOf(endpoint));
}
