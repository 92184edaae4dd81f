import { describe, expect, it } from 'vitest';
import { BACKSTOP_GRACE_MS, withinDeadline } from '../../../../functions/adapters/etcd/deadline.ts';
import { EtcdCallError } from '../../../../functions/ports/etcd.ts';

describe('withinDeadline', () => {
  it('hands the call an absolute deadline and returns its answer', async () => {
    const before = Date.now();
    const deadline = await withinDeadline(200, async (d) => d);
    expect(deadline.getTime()).toBeGreaterThanOrEqual(before + 200);
    expect(deadline.getTime()).toBeLessThanOrEqual(Date.now() + 200);
  });

  it('gives up with a timeout failure when the library never answers', async () => {
    const started = performance.now();
    const outcome = await withinDeadline(50, () => new Promise<never>(() => undefined)).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(EtcdCallError);
    expect((outcome as EtcdCallError).failure.kind).toBe('timeout');
    expect(performance.now() - started).toBeGreaterThanOrEqual(50 + BACKSTOP_GRACE_MS - 5);
  });

  it('leaves no timer behind once the call answers or fails', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    await withinDeadline(60_000, async () => 'answer');
    await withinDeadline(60_000, async () => Promise.reject(new EtcdCallError({ kind: 'refused', message: 'connection refused' }))).catch(() => undefined);
    expect(timers()).toBe(before);
  });
});
