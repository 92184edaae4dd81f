// Flag parsing for every command: node:util parseArgs in strict mode, with errors cut down to one
// line that names the flag, and the usage exit code.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { notADuration, parseDuration } from './duration.ts';

export const PROGRAM = 'etcd-remediator';

/** Bad input from the user: one line on stderr, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const HELP = { help: { type: 'boolean', short: 'h' } } as const;

/** A strict parse of one command's flags; `--help`/`-h` is added to every command. */
export function parseFlags<const O extends ParseArgsOptionsConfig>(command: string, argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options: { ...options, ...HELP }, strict: true, allowPositionals });
  } catch (error) {
    throw new UsageError(describeParseError(command, error));
  }
}

function describeParseError(command: string, error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const quoted = /'([^']+)'/.exec(message ?? '')?.[1] ?? '';
  const flag = quoted.split(' ')[0] ?? quoted;
  const seeHelp = `see ${PROGRAM} ${command} --help`;
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `${flag}: unknown flag for ${command} (${seeHelp})`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(message ?? '') ? `${flag}: takes no value` : `${flag}: needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(quoted)} (${seeHelp})`;
    default:
      return `${(message ?? String(error)).split('\n')[0]} (${seeHelp})`;
  }
}

/** A duration flag: undefined when absent, a usage error naming the flag when malformed. */
export function durationFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms === undefined) throw new UsageError(`--${name}: ${notADuration(value)}`);
  return ms;
}

export function requiredFlag(name: string, value: string | undefined, example: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required (e.g. --${name} ${example})`);
  return value;
}

/** A whole number within bounds, for flags such as --members. */
export function integerFlag(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new UsageError(`--${name}: ${JSON.stringify(value)} is not a whole number from ${min} to ${max}`);
  return n;
}
