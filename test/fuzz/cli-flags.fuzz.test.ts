// Issue 10 §4, the CLI's flags: property-based, in process. Random argv and flag values never
// crash the parsing: the only error is a UsageError, on one line, naming the flag it is about;
// absurd durations are refused naming the flag. A handful of generated cases run the real CLI.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durationFlag, integerFlag, MAX_FLAG_DURATION_MS, parseFlags, UsageError } from '../../infra/cli/args.ts';
import { checkAccess, type AccessInput } from '../../infra/cli/access-rules.ts';
import { accessOptions, clusterAccessFromFlags, clusterFromFlags, flagWords, parseEndpoints } from '../../infra/cli/cluster-flags.ts';
import { parseDuration } from '../../infra/cli/duration.ts';
import { planInputsFromFlags, planOptions } from '../../infra/cli/plan.ts';
import { targetFromFlags } from '../../infra/cli/target-flags.ts';
import { runCli } from '../integration/cli/support.ts';
import { fuzzFile, params, seed } from './fuzz-run.ts';

const fuzz = fuzzFile((n) => `cli flags fuzz: ${n} generated cases`);

/** Runs `fn`; anything thrown must be a one-line UsageError. Returns its message, or undefined when nothing was thrown. */
async function usageErrorOf(fn: () => unknown): Promise<string | undefined> {
  fuzz.generated();
  try {
    await fn();
    return undefined;
  } catch (error) {
    expect(error, String(error)).toBeInstanceOf(UsageError);
    const { message } = error as UsageError;
    expect(message.trim()).not.toBe('');
    expect(message).not.toContain('\n');
    return message;
  }
}

/** Whatever a user may type: flag-like tokens, values, unicode, `=`, `--`, dashes alone. */
const planFlagNames = Object.keys(planOptions);
const token = fc.oneof(
  fc.constantFrom(...planFlagNames).map((f) => `--${f}`),
  fc.constantFrom(...planFlagNames).chain((f) => fc.string({ maxLength: 12 }).map((v) => `--${f}=${v}`)),
  fc.string({ maxLength: 12 }).map((s) => `--${s}`),
  fc.string({ maxLength: 4 }).map((s) => `-${s}`),
  fc.constantFrom('--', '-', '-h', '--help', '---', '--=', '--grace=', '--target=-1'),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
);
const argvArb = fc.array(token, { maxLength: 8 });

/** Durations as written, and mistyped: pieces of number and unit, signs, exponents, spaces, huge numbers. */
const durationText = fc.oneof(
  fc
    .array(
      fc.tuple(
        fc.oneof(
          fc.nat({ max: 1_000 }).map(String),
          fc.double({ min: 0, max: 1e6, noNaN: true }).map(String),
          fc.constantFrom('99999999999999999', '1e3', '.5', '-1', '0x10', '1_000'),
        ),
        fc.constantFrom('h', 'm', 's', 'ms', 'us', 'µs', 'ns', 'd', 'H', '', ' s', 'sec'),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((parts) => parts.map(([n, u]) => `${n}${u}`).join('')),
  fc.string({ maxLength: 10 }),
  fc.constantFrom('0', '', '-0s', '596h31m24s', '596h31m23s', '597h', '1000h', '35791m24s', '2562047h47m16s', '9007199254740992ms'),
);

/** A flag named in a message: `--name`, `-x`, as the parser or our checks write it. */
const flagsIn = (message: string): string[] => [...message.matchAll(/(?:^|[\s(])(--?[^\s:=,()]+)/g)].map((m) => m[1]!);

describe('CLI flags, in process', () => {
  it('parseFlags: random argv for plan is parsed or refused naming the flag or the argument', async () => {
    await fc.assert(
      fc.asyncProperty(argvArb, async (argv) => {
        const message = await usageErrorOf(() => parseFlags('plan', argv, planOptions));
        if (message === undefined) return;
        if (message.startsWith('unexpected argument ')) {
          // The argument it quotes is one of those given.
          expect(argv.some((a) => message.includes(JSON.stringify(a)))).toBe(true);
          return;
        }
        // Otherwise the message opens with the flag, as given (the part before any `=`).
        const flag = /^(.*): (?:unknown flag for plan \(|needs a value$|takes no value$)/.exec(message)?.[1];
        expect(flag, message).toBeDefined();
        const typed = flag!.startsWith('"') ? (JSON.parse(flag!) as string) : flag!;
        expect(typed.startsWith('-'), message).toBe(true);
        expect(
          argv.some((a) => a === typed || a.startsWith(`${typed}=`) || (a.startsWith('-') && !a.startsWith('--') && a.includes(typed.slice(1)))),
          `${message} (argv ${JSON.stringify(argv)})`,
        ).toBe(true);
      }),
      params(3_000),
    );
  });

  it('durationFlag: a duration within the timer limit, or refused naming the flag; absurd ones always refused', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('grace', 'backoff', 'timeout', 'election-timeout'), durationText, async (name, text) => {
        let ms: number | undefined;
        const message = await usageErrorOf(() => (ms = durationFlag(name, text)));
        const parsed = parseDuration(text);
        if (message === undefined) {
          expect(ms).toBe(parsed);
          expect(Number.isSafeInteger(ms) && ms! >= 0 && ms! <= MAX_FLAG_DURATION_MS).toBe(true);
          return;
        }
        expect(message.startsWith(`--${name}: `), message).toBe(true);
        expect(message).toContain(JSON.stringify(text));
        if (parsed !== undefined) expect(message).toMatch(/is too long: at most 596h31m23s/);
      }),
      params(3_000),
    );
  });

  it('integerFlag: a whole number within bounds, or refused naming the flag', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer().map(String), fc.string({ maxLength: 8 }), fc.constantFrom('1e3', '3.0', '0x5', ' 3', '99999999999999999999')),
        async (text) => {
          let n: number | undefined;
          const message = await usageErrorOf(() => (n = integerFlag('members', text, 1, 9)));
          if (message === undefined) expect(Number.isInteger(n) && n! >= 1 && n! <= 9).toBe(true);
          else expect(message.startsWith('--members: ')).toBe(true);
        },
      ),
      params(1_000),
    );
  });

  const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
  const url = fc.oneof(
    fc.webUrl(),
    fc.constantFrom('http://127.0.0.1:2379', 'https://[::1]:2379', 'unix:///x', 'ftp://x', 'http://', '127.0.0.1:2379'),
    fc.string({ maxLength: 20 }),
  );
  const endpoints = fc.array(url, { maxLength: 3 }).map((list) => list.join(','));
  /** Names of files that do not exist, or exist and are not what is wanted. */
  const file = fc.oneof(
    fc.constantFrom('/nonexistent/ca.pem', '.', '/', '/dev/null', 'package.json', ''),
    fc.string({ maxLength: 10 }).map((s) => `/nonexistent/${s}`),
  );

  const planValues = fc.record(
    {
      endpoints: maybe(endpoints),
      cluster: maybe(fc.oneof(fc.string({ maxLength: 10 }), fc.constant(' '))),
      timeout: maybe(durationText),
      'election-timeout': maybe(durationText),
      cacert: maybe(file),
      cert: maybe(file),
      key: maybe(file),
      kubeconfig: maybe(file),
      'workload-kubeconfig': maybe(file),
      namespace: maybe(fc.string({ maxLength: 10 })),
      paths: maybe(
        fc.oneof(
          fc.array(fc.constantFrom('direct', 'port-forward', 'exec-relay', 'exec', 'ssh', '', ' '), { maxLength: 4 }).map((p) => p.join(',')),
          fc.string({ maxLength: 10 }),
        ),
      ),
      target: maybe(fc.string({ maxLength: 10 })),
      machine: maybe(fc.string({ maxLength: 10 })),
      node: maybe(fc.string({ maxLength: 10 })),
      grace: maybe(durationText),
      backoff: maybe(durationText),
      'no-skip-leader-move': maybe(fc.boolean()),
      'allow-shrink': maybe(fc.boolean()),
    },
    { requiredKeys: [] },
  );
  const knownFlags = new Set([...Object.keys(planOptions).map((f) => `--${f}`)]);

  it('plan and remediate flag values (cluster, target, access, durations): refused only as UsageError naming a flag', async () => {
    await fc.assert(
      fc.asyncProperty(planValues, async (values) => {
        const message = await usageErrorOf(() => planInputsFromFlags(values));
        if (message === undefined) return;
        const named = flagsIn(message).filter((f) => knownFlags.has(f));
        expect(named.length, message).toBeGreaterThan(0);
      }),
      params(1_500),
    );
  });

  it('cluster flags, endpoints and access rules on their own', async () => {
    await fc.assert(
      fc.asyncProperty(planValues, async (values) => {
        for (const fn of [
          () => clusterFromFlags(values),
          () => clusterAccessFromFlags(values),
          () => parseEndpoints(values.endpoints),
          () => targetFromFlags(values),
        ]) {
          const message = await usageErrorOf(fn);
          if (message !== undefined)
            expect(
              flagsIn(message).some((f) => knownFlags.has(f)),
              message,
            ).toBe(true);
        }
        const input: AccessInput = {
          hasEndpoints: values.endpoints !== undefined,
          kubeconfig: values.kubeconfig,
          workloadKubeconfig: values['workload-kubeconfig'],
          capiCluster: values.cluster,
          namespace: values.namespace,
          paths: values.paths?.split(','),
        };
        const message = await usageErrorOf(() => checkAccess(input, flagWords));
        if (message !== undefined)
          expect(
            flagsIn(message).some((f) => f in accessOptions || knownFlags.has(f)),
            message,
          ).toBe(true);
      }),
      params(500),
    );
  });
});

describe('regressions: inputs the fuzzer found mis-named or accepted before the fix', () => {
  const messageOf = (fn: () => unknown): string => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error('no UsageError');
  };

  it('an unknown flag holding a space is named whole, quoted (it was named "--")', () => {
    expect(messageOf(() => parseFlags('plan', ['-- '], planOptions))).toBe('"-- ": unknown flag for plan (see etcd-remediator plan --help)');
  });

  it('a stray argument holding a quote is named whole (it was cut at the quote)', () => {
    expect(messageOf(() => parseFlags('plan', ['--', "--endpoints='"], planOptions))).toBe(
      'unexpected argument "--endpoints=\'" (see etcd-remediator plan --help)',
    );
  });

  it('a duration past what a timer can wait is refused, named (--timeout 1000h was taken)', () => {
    expect(messageOf(() => durationFlag('timeout', '1000h'))).toBe(
      '--timeout: "1000h" is too long: at most 596h31m23s (about 24.8 days, the longest a timer can wait)',
    );
    expect(durationFlag('timeout', '596h31m23s')).toBe(2_147_483_000);
  });
});

describe('the real CLI, a handful of generated cases', () => {
  it('absurd durations and unknown flags: exit 2, one line on stderr naming the flag', async () => {
    const cases = fc.sample(
      fc.oneof(
        fc
          .tuple(
            fc.constantFrom('grace', 'backoff', 'timeout'),
            fc.integer({ min: 597, max: 1e9 }).map((h) => `${h}h`),
          )
          .map(([flag, value]) => ({ argv: [`--${flag}`, value], flag: `--${flag}` })),
        fc
          .stringMatching(/^[a-z][a-z-]{2,10}$/)
          .filter((f) => !(f in planOptions))
          .map((f) => ({ argv: [`--${f}`, 'x'], flag: `--${f}` })),
      ),
      { numRuns: 5, seed },
    );
    for (const { argv, flag } of cases) {
      fuzz.generated();
      const run = await runCli(['plan', '--endpoints', 'http://127.0.0.1:1', '--target', 'etcd-1', ...argv]);
      expect(run.code, run.stderr).toBe(2);
      const lines = run.stderr.trim().split('\n');
      expect(lines, run.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^etcd-remediator: ${flag}: `));
    }
  }, 60_000);
});
