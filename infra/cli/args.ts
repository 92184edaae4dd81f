// Flag parsing for every command: node:util parseArgs in strict mode, with errors cut down to one
// line that names the flag, and the usage exit code.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { notADuration, parseDuration } from './duration.ts';
import { MAX_TIMER_MS } from '../../functions/lib/timer-limit.ts';

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
    throw new UsageError(describeParseError(command, error, offending(argv, options)));
  }
}

interface Offending {
  /** The first unknown flag, as typed. */
  flag?: string;
  /** The first positional argument. */
  positional?: string;
}

/**
 * The unknown flag and the stray argument as typed, found by the parser's own tokens rather than
 * read back from its message (which a flag or argument holding a space or a quote would cut short).
 */
function offending(argv: string[], options: ParseArgsOptionsConfig): Offending {
  try {
    const { tokens } = parseArgs({ args: argv, options: { ...options, ...HELP }, strict: false, allowPositionals: true, tokens: true });
    const flag = tokens.find((t) => t.kind === 'option' && !Object.hasOwn(options, t.name) && !Object.hasOwn(HELP, t.name));
    const positional = tokens.find((t) => t.kind === 'positional');
    return {
      ...(flag?.kind === 'option' ? { flag: flag.rawName } : {}),
      ...(positional?.kind === 'positional' ? { positional: positional.value } : {}),
    };
  } catch {
    return {};
  }
}

/** A flag as the user typed it: as is when plain, quoted when it holds spaces or control characters. */
const shown = (flag: string): string => (/^[!-~]+$/.test(flag) ? flag : JSON.stringify(flag));

function describeParseError(command: string, error: unknown, typed: Offending): string {
  const { code, message } = error as { code?: string; message?: string };
  const quoted = /'([^']+)'/.exec(message ?? '')?.[1] ?? '';
  const flag = quoted.split(' ')[0] ?? quoted;
  const seeHelp = `see ${PROGRAM} ${command} --help`;
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `${shown(typed.flag ?? flag)}: unknown flag for ${command} (${seeHelp})`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(message ?? '') ? `${flag}: takes no value` : `${flag}: needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(typed.positional ?? quoted)} (${seeHelp})`;
    default:
      return `${(message ?? String(error)).split('\n')[0]} (${seeHelp})`;
  }
}

/**
 * The longest a Node timer waits (2^31 - 1 ms, about 24.8 days). Past it Node fires the timer at
 * once, so a `--timeout 1000h` would time every call out at 1 ms and a `--backoff 1000h` would
 * retry in a tight loop: refused instead.
 */
export const MAX_FLAG_DURATION_MS = MAX_TIMER_MS;

/** A duration flag: undefined when absent, a usage error naming the flag when malformed or absurdly long. */
export function durationFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms === undefined) throw new UsageError(`--${name}: ${notADuration(value)}`);
  if (ms > MAX_FLAG_DURATION_MS) {
    throw new UsageError(`--${name}: ${JSON.stringify(value)} is too long: at most 596h31m23s (about 24.8 days, the longest a timer can wait)`);
  }
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
