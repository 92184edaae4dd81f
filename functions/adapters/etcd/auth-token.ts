// etcd authentication for one client: every call carries a token, fetched with Authenticate on
// first use and again once etcd says it is stale. etcd3's own `auth` option is not used: its token
// call opens a channel of its own (grpc-js defaults, the IP sent as TLS server name) and never
// closes it; here the token comes over a client built like every other, closed once it answered.
import { InterceptingCall, status as grpcStatus, type Interceptor } from '@grpc/grpc-js';
import type { EtcdUser } from '../../ports/etcd.ts';
import { normalizeEtcdError } from './normalize-error.ts';

/** Asks etcd for a token for the user, answering by `deadline`. */
export type Authenticate = (deadline: Date) => Promise<string>;

const AUTHENTICATE = '/etcdserverpb.Auth/Authenticate';
/** etcd's words for a token it no longer takes (it lapsed, or the user's roles changed). */
const STALE_TOKEN = /invalid auth token|auth: revision in header is old/;
/** Only for a call without a deadline, which this project never makes. */
const FALLBACK_DEADLINE_MS = 30_000;

const CODES: Record<string, number> = {
  auth: grpcStatus.UNAUTHENTICATED,
  timeout: grpcStatus.DEADLINE_EXCEEDED,
  refused: grpcStatus.UNAVAILABLE,
  tls: grpcStatus.UNAVAILABLE,
};

/** A failed token call as the status of the call that needed it, keeping etcd's words and code. */
function statusOf(error: unknown, user: EtcdUser): { code: number; details: string } {
  const failure = normalizeEtcdError(error);
  return { code: failure.grpcCode ?? CODES[failure.kind] ?? grpcStatus.UNKNOWN, details: `${failure.message} (authenticating as etcd user ${user.username})` };
}

export function tokenInterceptor(user: EtcdUser, authenticate: Authenticate): Interceptor {
  let token: Promise<string> | undefined;
  const current = (deadline: Date): Promise<string> => {
    if (token) return token;
    const fetching = authenticate(deadline);
    token = fetching;
    // A failed fetch is not kept: the next call asks again.
    fetching.catch(() => {
      if (token === fetching) token = undefined;
    });
    return fetching;
  };
  return (options, nextCall) => {
    const call = nextCall(options);
    if (options.method_definition.path === AUTHENTICATE) return new InterceptingCall(call);
    const { deadline } = options;
    const by = deadline === undefined ? new Date(Date.now() + FALLBACK_DEADLINE_MS) : new Date(deadline);
    return new InterceptingCall(call, {
      start(metadata, listener, next) {
        current(by).then(
          (value) => {
            const sent = token;
            metadata.set('token', value);
            next(metadata, {
              onReceiveStatus(status, nextStatus) {
                if (STALE_TOKEN.test(status.details) && token === sent) token = undefined;
                nextStatus(status);
              },
            });
          },
          (error: unknown) => {
            // Started, then ended at once with the token call's failure, so the call is accounted for.
            next(metadata, listener);
            const { code, details } = statusOf(error, user);
            call.cancelWithStatus(code, details);
          },
        );
      },
    });
  };
}
