// The embedded runtime's Powertools log level for remediate and run: SILENT unless
// ETCD_REMEDIATOR_LOG_LEVEL asks for more (its JSON lines then go to stdout and stderr).
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { UsageError } from './args.ts';

export const LOG_LEVEL_ENV = 'ETCD_REMEDIATOR_LOG_LEVEL';

const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;

export function cliLogLevel(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const value = env[LOG_LEVEL_ENV];
  if (value === undefined || value === '') return 'SILENT';
  const level = LEVELS.find((l) => l === value.toUpperCase());
  if (level === undefined) throw new UsageError(`${LOG_LEVEL_ENV}=${value}: not a log level (one of ${LEVELS.join(', ')})`);
  return level;
}
