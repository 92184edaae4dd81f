// The Lambda simulation's asynchronous invocation against the Developer Guide: the documented
// defaults (two retries, about one then two minutes apart, six hours of event age), the
// EventInvokeConfig's retries and maximum event age, each run compressed so the test is short.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FailedInvocation } from '../../support/aws-sim/invocation-record.ts';
import {
  checkedInvokeConfig,
  LAMBDA_ASYNC_DEFAULTS,
  LAMBDA_RETRY_DELAYS_MS,
  startContainer,
  type HostOptions,
  type Invocation,
  type LambdaContainer,
} from '../../support/aws-sim/lambda-host.ts';

const dir = mkdtempSync(join(tmpdir(), 'lambda-async-'));
const bundle = join(dir, 'index.mjs');
// Fails when the event asks it to, and takes as long as it asks.
writeFileSync(
  bundle,
  'export const handler = async (event) => { await new Promise((r) => setTimeout(r, event.slowMs ?? 0)); if (event.fail) throw new Error("down"); return "ok"; };\n',
);

describe('Lambda asynchronous invocation (simulation)', () => {
  const open: LambdaContainer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function start(options: Partial<HostOptions> = {}) {
    const log: Invocation[] = [];
    const failed: FailedInvocation[] = [];
    const container = await startContainer('fn', bundle, {
      env: { PATH: process.env.PATH },
      log,
      functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:fn',
      onFailure: (f) => void failed.push(f),
      ...options,
    });
    open.push(container);
    return { container, log, failed };
  }

  it('defaults to what the guide documents: 2 retries, about 1 then 2 minutes apart, 6 hours of age', () => {
    expect(LAMBDA_RETRY_DELAYS_MS).toEqual([60_000, 120_000]);
    expect(LAMBDA_ASYNC_DEFAULTS).toEqual({ maximumRetryAttempts: 2, maximumEventAgeInSeconds: 6 * 3600 });
    expect(checkedInvokeConfig()).toEqual(LAMBDA_ASYNC_DEFAULTS);
  });

  it('an invocation that keeps failing is tried three times, waiting the retry delays, then its record goes on: RetriesExhausted', async () => {
    const { container, log, failed } = await start({ compression: 100 });
    await container.invokeAsync({ fail: true });
    expect(log.map((i) => [i.attempt, i.ok])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(log[1]!.at - log[0]!.at).toBeGreaterThanOrEqual(600);
    expect(log[2]!.at - log[1]!.at).toBeGreaterThanOrEqual(1_200);
    expect(failed.map((f) => [f.tries, f.condition, f.errorMessage])).toEqual([[3, 'RetriesExhausted', 'down']]);
  });

  it('MaximumRetryAttempts 0: one try, then the record', async () => {
    const { container, log, failed } = await start({ eventInvokeConfig: { maximumRetryAttempts: 0, maximumEventAgeInSeconds: 3600 }, compression: 1_000 });
    await container.invokeAsync({ fail: true });
    expect(log).toHaveLength(1);
    expect(failed.map((f) => [f.tries, f.condition])).toEqual([[1, 'RetriesExhausted']]);
  });

  it('a retry that would come past the maximum event age is not made: the event is discarded as EventAgeExceeded', async () => {
    // 90 s of age: the retry after 1 minute fits, the one 2 minutes later does not.
    const { container, log, failed } = await start({ eventInvokeConfig: { maximumRetryAttempts: 2, maximumEventAgeInSeconds: 90 }, compression: 1_000 });
    await container.invokeAsync({ fail: true });
    expect(log).toHaveLength(2);
    expect(failed.map((f) => [f.tries, f.condition])).toEqual([[2, 'EventAgeExceeded']]);
  });

  it('a success ends the invocation with no record', async () => {
    const { container, log, failed } = await start({ compression: 1_000 });
    await container.invokeAsync({ fail: false });
    expect(log.map((i) => i.ok)).toEqual([true]);
    expect(failed).toEqual([]);
  });

  it('a crash fails only the invocations in flight on that container; those sent as it dies are retried on a fresh one', async () => {
    const { container, log, failed } = await start({ compression: 1_000 });
    const firstPid = container.pid;
    const inFlight = container.invokeAsync({ slowMs: 200, n: 1 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    container.crash();
    // Sent while the killed container's exit is not yet reported, and again right after.
    const sentAsItDies = container.invokeAsync({ n: 2 });
    await Promise.all([inFlight, sentAsItDies, container.invokeAsync({ n: 3 })]);
    const tries = (n: number) => log.filter((i) => (i.event as { n: number }).n === n).map((i) => [i.attempt, i.ok, i.error?.replace(/RequestId: \S+ /, '')]);
    expect(tries(1)).toEqual([
      [1, false, 'Runtime.ExitError: Error: Runtime exited with error: signal: killed'],
      [2, true, undefined],
    ]);
    // Each sent to the dying container fails as a runtime exit (its pipe broken, or its exit
    // seen), never as an error thrown at the caller, and its retry runs on the fresh one.
    for (const n of [2, 3]) {
      expect(tries(n).at(-1)).toEqual([tries(n).length, true, undefined]);
      for (const [, , error] of tries(n).slice(0, -1)) expect(error).toMatch(/^Runtime\.ExitError: Error: Runtime exited with error: /);
    }
    expect(failed).toEqual([]);
    expect(container.pid).not.toBe(firstPid);
  });

  it.each([
    [{ maximumRetryAttempts: 3 }, 'MaximumRetryAttempts must be an integer from 0 to 2, got 3'],
    [{ maximumEventAgeInSeconds: 59 }, 'MaximumEventAgeInSeconds must be an integer from 60 to 21600, got 59'],
  ])('refuses an EventInvokeConfig outside the documented ranges: %j', (config, message) => {
    expect(() => checkedInvokeConfig(config)).toThrow(message);
  });
});
