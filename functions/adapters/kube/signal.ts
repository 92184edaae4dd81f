// client-node's generated APIs take no AbortSignal argument; its fetch does read one from the
// request context, so a middleware puts it there.
import { Observable, type ConfigurationOptions, type RequestContext, type ResponseContext } from '@kubernetes/client-node';

/** Call options that abort the request with `signal`; undefined without one. */
export function withSignal(signal: AbortSignal | undefined): ConfigurationOptions | undefined {
  if (!signal) return undefined;
  return {
    middleware: [
      {
        pre: (context: RequestContext) => {
          context.setSignal(signal);
          return new Observable(Promise.resolve(context));
        },
        post: (context: ResponseContext) => new Observable(Promise.resolve(context)),
      },
    ],
    // Append: replacing would drop the kubeconfig's own middleware.
    middlewareMergeStrategy: 'append',
  };
}
