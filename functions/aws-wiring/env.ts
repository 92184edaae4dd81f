// The Lambda environment the stack sets. A missing variable fails the cold start with its name,
// not the first AWS call with an SDK error about an empty parameter.
export type Env = Readonly<Record<string, string | undefined>>;

/** What an SDK client is made with: the endpoint and region, when the environment names them. */
export interface ClientConfig {
  endpoint?: string;
  region?: string;
}

export class MissingEnvError extends Error {
  readonly names: readonly string[];
  constructor(names: readonly string[], functionName: string) {
    const which = names.length === 1 ? `environment variable ${names[0]} is not set` : `environment variables ${names.join(', ')} are not set`;
    super(`${functionName}: ${which}; the stack sets them on the function (see infra/cdk)`);
    this.name = 'MissingEnvError';
    this.names = names;
  }
}

/** A variable that is set but cannot be used: its name, and what is wrong with it. */
export class InvalidEnvError extends Error {
  readonly variable: string;
  constructor(variable: string, functionName: string, problem: string) {
    super(`${functionName}: environment variable ${variable}: ${problem}; the stack sets it on the function (see infra/cdk)`);
    this.name = 'InvalidEnvError';
    this.variable = variable;
  }
}

/** Every name, or one error naming each that is missing or empty. */
export function requireEnv<const N extends string>(env: Env, functionName: string, names: readonly N[]): Record<N, string> {
  const missing = names.filter((name) => !env[name]?.trim());
  if (missing.length > 0) throw new MissingEnvError(missing, functionName);
  return Object.fromEntries(names.map((name) => [name, env[name]!.trim()])) as Record<N, string>;
}

/**
 * The SDK reads AWS_ENDPOINT_URL_<SERVICE> from process.env by itself; said explicitly here so an
 * `env` other than process.env (a test's) is honoured too. `service` is the SDK's suffix.
 */
export function clientConfig(env: Env, service: 'DYNAMODB' | 'EVENTBRIDGE' | 'SCHEDULER' | 'SQS' | 'SECRETS_MANAGER' | 'S3'): ClientConfig {
  const endpoint = env[`AWS_ENDPOINT_URL_${service}`] ?? env.AWS_ENDPOINT_URL;
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  return { ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}) };
}
