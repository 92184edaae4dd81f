// What every benchmark measures with: the time of one call, and the median of a few.
import { performance } from 'node:perf_hooks';

export { median } from '../../functions/core/common/collections.ts';

export async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}
