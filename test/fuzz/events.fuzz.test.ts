// Issue 10 §4, bad input: fast-check mutations of every detail type of the catalogue. Well over
// 10,000 generated events through validation (parseEvent, parseEnvelope); a few hundred more
// through each edge that takes input, where each refusal must also be kept as a dead letter:
// the local runtime's submit, the `run` service's intake, the Lambda intake and the four
// handlers' envelope parsing. No crash, no unhandled rejection, and every refusal names the
// field that was broken.
import { Logger } from '@aws-lambda-powertools/logger';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detailTypes, EVENT_SOURCE, routesOf, type DetailType } from '../../events/catalogue.ts';
import { parseEnvelope, parseEvent } from '../../events/validate.ts';
import { intake, type IntakeDeps } from '../../functions/app/intake/intake.ts';
import type { ClusterDeps } from '../../functions/app/common/deps.ts';
import { registryOf } from '../support/directory-registry.ts';
import { InvalidEventError, type LambdaHandler } from '../../functions/lambda/event-handler.ts';
import { toEventBridgeEvent } from '../../functions/lambda/eventbridge.ts';
import { createIntake } from '../../infra/cli/intake.ts';
import { localContext } from '../../infra/runtime/lambda-context.ts';
import { handlerFactories } from '../../infra/runtime/function-handlers.ts';
import type { LocalRuntime } from '../../infra/runtime/runtime.ts';
import { harness, type Harness } from '../unit/app/harness.ts';
import { silentRuntime } from '../unit/runtime/helpers.ts';
import {
  absurdNumbers,
  deepValue,
  missingField,
  misnamed,
  mustFail,
  negativeAttempt,
  oversized,
  pollution,
  samples,
  setAt,
  unicode,
  wrongType,
  type Mutation,
} from './mutations.ts';
import { fuzzFile, params } from './fuzz-run.ts';

const fuzz = fuzzFile((n) => `fuzz: ${n} generated events`);

/** Validation alone: refused (unless `maybe`), naming the mutated field, prototypes untouched. */
function checkParse(m: Mutation): void {
  fuzz.generated();
  const result = parseEvent(m.detailType, m.detail);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  if (result.ok) {
    expect(m.expect, `${m.kind} at ${m.path} was accepted`).toBe('maybe');
    return;
  }
  expect(misnamed(m, result.error.issues), result.error.summary.slice(0, 500)).toBeUndefined();
  // The one-line summary says the same paths.
  for (const issue of result.error.issues) expect(result.error.summary).toContain(`${issue.path}: `);
}

describe('validation: every detail type, mutated', () => {
  it.each([
    ['missing required fields', missingField, 1_000],
    ['wrong types', wrongType, 2_000],
    ['any value at any depth', deepValue, 2_500],
    ['prototype-pollution keys at any depth', pollution, 1_500],
    ['absurd durations and attempts', absurdNumbers, 1_500],
    ['negative attempts', negativeAttempt, 500],
    ['unicode in every string field', unicode, 1_500],
    ['oversized payloads', oversized, 150],
  ] as const)('%s', (_name, arb, runs) => {
    fc.assert(fc.property(arb, checkParse), params(runs));
  });

  it('unknown detail types, and envelopes of any shape', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }).filter((t) => !(detailTypes as readonly string[]).includes(t)),
        fc.constantFrom(...detailTypes),
        (name, t) => {
          fuzz.generated();
          const result = parseEvent(name, samples[t]);
          expect(result.ok).toBe(false);
          if (!result.ok) expect(result.error.issues).toEqual([expect.objectContaining({ path: 'detailType' })]);
        },
      ),
      params(1_000),
    );
    fc.assert(
      fc.property(
        fc.anything({ maxDepth: 2, withBigInt: true, withNullPrototype: true, withObjectString: true }),
        fc.oneof(fc.constant(EVENT_SOURCE), fc.anything({ maxDepth: 0 })),
        (detailType, source) => {
          fuzz.generated();
          const result = parseEnvelope({ source, detailType, detail: samples.RetryDue });
          if (detailType === 'RetryDue' && source === EVENT_SOURCE) return;
          expect(result.ok).toBe(false);
          if (!result.ok) expect(result.error.issues[0]!.path).toBe(source === EVENT_SOURCE ? 'detailType' : 'source');
        },
      ),
      params(1_000),
    );
    fc.assert(
      fc.property(
        fc.anything({ maxDepth: 3, withBigInt: true, withNullPrototype: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true }),
        (envelope) => {
          fuzz.generated();
          const result = parseEnvelope(envelope);
          if (!result.ok) expect(result.error.issues.length).toBeGreaterThan(0);
        },
      ),
      params(1_000),
    );
  });

  it('values JSON cannot carry, and cycles, are refused at their path', () => {
    const cyclic = structuredClone(samples.MemberUnhealthy) as Record<string, unknown> & { target: Record<string, unknown> };
    cyclic.target.self = cyclic;
    const cases: [unknown, string][] = [
      [setAt(samples.MemberUnhealthy, ['attempt'], 1n), 'attempt'],
      [setAt(samples.MemberUnhealthy, ['reason'], () => 'x'), 'reason'],
      [setAt(samples.MemberUnhealthy, ['source'], Symbol('s')), 'source'],
      [setAt(samples.RemediationFailed, ['evidence', 'grpcCode'], NaN), 'evidence.grpcCode'],
      [setAt(samples.RemediationFailed, ['evidence', 'big'], 10n ** 30n), 'evidence.big'],
      [cyclic, 'target.self'],
    ];
    for (const [detail, path] of cases) {
      fuzz.generated();
      const type = detail === cyclic || (detail as { observedAt?: unknown }).observedAt !== undefined ? 'MemberUnhealthy' : 'RemediationFailed';
      const result = parseEvent(type, detail);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.issues.map((i) => i.path)).toContain(path);
    }
  });
});

describe('regressions: inputs the fuzzer found accepted or mis-kept before the fix', () => {
  const withOwn = (detail: unknown, path: (string | number)[], value: unknown) => setAt(detail, path, value);

  it('a top-level __proto__ (stripped silently before) is refused, named', () => {
    const result = parseEvent('MemberUnhealthy', JSON.parse(`{"__proto__":{"polluted":true},${JSON.stringify(samples.MemberUnhealthy).slice(1)}`));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.issues).toEqual([{ path: '__proto__', problem: expect.stringMatching(/reserved key/) }]);
  });

  it('an evidence key __proto__ (dropped silently before) is refused, named', () => {
    const result = parseEvent('RemediationFailed', withOwn(samples.RemediationFailed, ['evidence', '__proto__'], { isAdmin: true }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.issues.map((i) => i.path)).toEqual(['evidence.__proto__']);
  });

  it("a 300 KB unknown field (stripped and accepted before, past EventBridge's 256 KiB) is refused, named", () => {
    const result = parseEvent('MemberUnhealthy', { ...samples.MemberUnhealthy, 'x-extra': 'x'.repeat(300_000) });
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.error.summary).toMatch(
        /^MemberUnhealthy is invalid: x-extra: is 300002 bytes and makes the detail \d+ bytes, over the limit of 262144 bytes$/,
      );
  });

  it('absurd durations (a tookMs of 1e308, accepted before) are refused, named', () => {
    const result = parseEvent('LeaderMoved', { ...samples.LeaderMoved, tookMs: 1e308 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.issues).toEqual([{ path: 'tookMs', problem: 'must be at most 86400000 ms (a day)' }]);
  });
});

// The edges: fewer cases, each through the real code that keeps the dead letter.
const EDGE_RUNS = 150;

describe('the local runtime and the run service refuse, name the field, and keep a dead letter', () => {
  let runtime: LocalRuntime;
  let close: () => Promise<void>;
  // Nothing valid is submitted; a probe would never answer.
  beforeEach(async () => {
    ({ runtime, close } = await silentRuntime('prod-eu-1'));
  });
  afterEach(() => close());

  it('runtime.submit', async () => {
    const ids: string[] = [];
    await fc.assert(
      fc.asyncProperty(mustFail(['MemberUnhealthy']), async (m) => {
        fuzz.generated();
        const error = await runtime.submit(m.detail, 'fuzz').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(InvalidEventError);
        const { message, deadLetterId } = error as InvalidEventError;
        expect(message).toContain(`${m.path}: `);
        ids.push(deadLetterId);
      }),
      params(EDGE_RUNS),
    );
    // Values only an in-process caller can hand over: kept too, described rather than lost.
    for (const detail of [setAt(samples.MemberUnhealthy, ['attempt'], 7n), undefined, Symbol('x')]) {
      fuzz.generated();
      const error = await runtime.submit(detail).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidEventError);
      ids.push((error as InvalidEventError).deadLetterId);
    }
    const dead = await runtime.store.listDeadLetters();
    expect(dead.map((d) => d.id).sort()).toEqual([...ids].sort());
    for (const d of dead) {
      expect(d.payload.length).toBeGreaterThan(0);
      expect(d.error).toMatch(/MemberUnhealthy is invalid: \S+: /);
    }
    expect(dead.find((d) => d.payload.includes('7n'))).toBeDefined();
  });

  it('the run service intake (HTTP bodies and stdin lines)', async () => {
    const take = createIntake(runtime, ['prod-eu-1']);
    const ids = new Set<string>();
    const text = fc.oneof(
      // The intake stamps `at` when absent, so that one is not a refusal there.
      {
        arbitrary: mustFail(['MemberUnhealthy'])
          .filter((m) => !(m.kind === 'missing field' && m.path === 'at'))
          .map((m) => ({ m, text: JSON.stringify(m.detail) })),
        weight: 4,
      },
      { arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map((s) => ({ m: undefined, text: s })), weight: 1 },
    );
    await fc.assert(
      fc.asyncProperty(text, async ({ m, text }) => {
        fuzz.generated();
        const reply = await take(text, 'fuzz');
        expect(reply.accepted).toBe(false);
        if (reply.accepted) return;
        if (m) expect(reply.field, reply.error).toBe(m.path);
        else expect(reply.field).toMatch(/\S/);
        expect(reply.error).toContain(`${reply.field}: `);
        ids.add(reply.deadLetterId);
      }),
      params(EDGE_RUNS * 2),
    );
    const dead = await runtime.store.listDeadLetters();
    expect(new Set(dead.map((d) => d.id))).toEqual(ids);
  });
});

describe('the Lambda intake and the handlers refuse, name the field, and keep a dead letter', () => {
  let h: Harness;
  beforeEach(() => {
    h = harness();
  });
  afterEach(async () => h.close());

  it('the intake function, invoked with a MemberUnhealthy', async () => {
    const deps: IntakeDeps = {
      store: h.deps.store,
      bus: h.deps.bus,
      clock: h.clock,
      log: new Logger({ serviceName: 'intake', logLevel: 'SILENT' }),
      directory: { ...registryOf(h.deps.directory), findByInstance: async () => undefined, findByNode: async () => undefined },
    };
    let kept = 0;
    await fc.assert(
      // The intake fills in clusterId and at when it can, so their absence is not always a refusal.
      fc.asyncProperty(
        mustFail(['MemberUnhealthy']).filter((m) => !(m.kind === 'missing field' && ['at', 'clusterId'].includes(m.path))),
        async (m) => {
          fuzz.generated();
          const result = await intake(deps, m.detail);
          expect(result.published).toEqual([]);
          expect(result.deadLetters).toHaveLength(1);
          // Lambda's own formatting of a nested path joins with dots: compare the top-level field.
          const field = m.path.split(/[.[]/)[0]!;
          expect(result.deadLetters[0]!.error).toMatch(new RegExp(`(^|[ ;:])${field.replace(/[$()*+.?[\\\]^{|}]/g, '\\$&')}[.:\\[ ]`));
          kept++;
        },
      ),
      params(EDGE_RUNS),
    );
    expect(h.events).toEqual([]);
    expect(await h.deps.store.listDeadLetters()).toHaveLength(kept);
  });

  it("each handler's envelope parsing", async () => {
    const deps: ClusterDeps = { ...h.deps, log: new Logger({ serviceName: 'fuzz', logLevel: 'SILENT' }) };
    // Each routed detail type, to the handler of the function the catalogue routes it to.
    const handlers = new Map<DetailType, LambdaHandler<unknown>>(detailTypes.flatMap((t) => routesOf(t).map((fn) => [t, handlerFactories[fn](deps)] as const)));
    let kept = 0;
    const refused = async (handler: LambdaHandler<unknown>, event: unknown): Promise<InvalidEventError> => {
      fuzz.generated();
      const error = await handler(event, localContext('fuzz')).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidEventError);
      kept++;
      return error as InvalidEventError;
    };
    await fc.assert(
      fc.asyncProperty(mustFail([...handlers.keys()]), async (m) => {
        const error = await refused(handlers.get(m.detailType as DetailType)!, toEventBridgeEvent({ detailType: m.detailType, detail: m.detail }));
        expect(error.message).toContain(`${m.path}: `);
      }),
      params(EDGE_RUNS),
    );
    // Whole EventBridge events of any shape: refused as InvalidEventError, never anything else.
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...handlers.values()), fc.anything({ maxDepth: 2, withNullPrototype: true }), async (handler, event) => {
        await refused(handler, event);
      }),
      params(EDGE_RUNS),
    );
    expect(h.events).toEqual([]);
    expect(await h.deps.store.listDeadLetters()).toHaveLength(kept);
  });
});
