// When every path fails on TLS or auth, waiting will not help: name the credential to fix.
import type { PathProbe } from './types.ts';
import { describePath, listWords } from './explain.ts';

type Attempted = Pick<PathProbe, 'path' | 'endpoint' | 'reachability' | 'failure'>;

export interface CredentialProblem {
  reason: 'TLS_FAILED' | 'AUTH_FAILED';
  /** Which credential, e.g. "the client certificate/CA for https://10.0.0.1:2379". */
  credential: string;
  /** The failed paths, described. */
  failures: string;
}

const credentialFor = (p: Attempted): string =>
  p.reachability === 'tls' ? `the client certificate/CA for ${p.endpoint}` : 'the etcd user';

/** Set when there is at least one path and every one failed on TLS or auth. */
export function credentialProblem(paths: Attempted[]): CredentialProblem | undefined {
  if (paths.length === 0 || !paths.every((p) => p.reachability === 'tls' || p.reachability === 'auth')) return undefined;
  const credentials = [...new Set(paths.map(credentialFor))];
  return {
    reason: paths[0]!.reachability === 'tls' ? 'TLS_FAILED' : 'AUTH_FAILED',
    credential: listWords(credentials),
    failures: paths.map(describePath).join('; '),
  };
}
