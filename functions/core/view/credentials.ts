// When every path fails on TLS or auth, waiting will not help: name the credential to fix.
import type { PathProbe } from '../common/index.ts';
import { describePath, listWords } from './explain.ts';

type Attempted = Pick<PathProbe, 'path' | 'endpoint' | 'reachability' | 'failure'>;

export interface CredentialProblem {
  reason: 'TLS_FAILED' | 'AUTH_FAILED';
  /** Which credential, e.g. "the client certificate or CA used for https://10.0.0.1:2379". */
  credential: string;
  /** The failed paths, described. */
  failures: string;
}

/** One credential named once, with the endpoints that refused it. */
function credentialsOf(paths: Attempted[]): string[] {
  const tlsEndpoints = [...new Set(paths.filter((p) => p.reachability === 'tls').map((p) => p.endpoint))];
  const tls = tlsEndpoints.length > 0 ? [`the client certificate or CA used for ${listWords(tlsEndpoints)}`] : [];
  return [...tls, ...(paths.some((p) => p.reachability === 'auth') ? ['the etcd user'] : [])];
}

/** Set when there is at least one path and every one failed on TLS or auth. */
export function credentialProblem(paths: Attempted[]): CredentialProblem | undefined {
  if (paths.length === 0 || !paths.every((p) => p.reachability === 'tls' || p.reachability === 'auth')) return undefined;
  const credentials = credentialsOf(paths);
  return {
    reason: paths[0]!.reachability === 'tls' ? 'TLS_FAILED' : 'AUTH_FAILED',
    credential: listWords(credentials),
    failures: paths.map(describePath).join('; '),
  };
}
