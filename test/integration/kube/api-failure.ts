// The Status of an API call that must fail, as client-node gives it: its code and the parsed body.
import { ApiException } from '@kubernetes/client-node';

/** Throws unless `call` fails with an ApiException. */
export async function failureOf(call: Promise<unknown>): Promise<{ code: number; body: unknown }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiException)) throw new Error(`expected an ApiException, got ${String(error)}`);
  return { code: error.code, body: JSON.parse(String((error as ApiException<string>).body)) };
}
