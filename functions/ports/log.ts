// Logging as a port: the Powertools Logger on AWS, a line printer locally, a silent one in tests.

/** The subset of Powertools Logger the application uses, so tests can pass a silent one. */
export interface Log {
  debug(message: string, ...extra: Record<string, unknown>[]): void;
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}
