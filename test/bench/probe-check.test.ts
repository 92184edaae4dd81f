// bench:probe counts a probe toward its latency goal only when it found what the lab holds: a probe
// that returned before it heard from every member is fast, and proves nothing.
import { describe, expect, it } from 'vitest';
import { nameOf, sample } from '../unit/core/fixtures.ts';
import { checkProbe } from './probe-check.ts';

// Five members, etcd-3 and etcd-4 blackholed.
const expected = { healthy: [0, 1, 2].map(nameOf), blackholed: [3, 4].map(nameOf) };

describe('checkProbe', () => {
  it('a probe that heard from each healthy member and timed out on each blackholed one is complete', () => {
    const found = checkProbe(sample(0, [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3, paths: 'timeout' }, { i: 4, paths: 'timeout' }]), expected);
    expect(found).toEqual({ complete: true, says: 'listed=5/5 answered=3/3 failed=2/2' });
  });

  it('a probe that returned before a healthy member answered is not', () => {
    const found = checkProbe(sample(0, [{ i: 0 }, { i: 1 }, { i: 2, paths: {} }, { i: 3, paths: 'timeout' }, { i: 4, paths: 'timeout' }]), expected);
    expect(found).toEqual({ complete: false, says: 'listed=5/5 answered=2/3 failed=2/2 (no answer from etcd-2)' });
  });

  it('a probe that never asked a blackholed member, or lost one from its list, is not', () => {
    expect(checkProbe(sample(0, [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3, paths: {} }, { i: 4, paths: 'timeout' }]), expected)).toEqual({
      complete: false,
      says: 'listed=5/5 answered=3/3 failed=1/2 (etcd-3 not asked)',
    });
    expect(checkProbe(sample(0, [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3, paths: 'timeout' }]), expected)).toEqual({
      complete: false,
      says: 'listed=4/5 answered=3/3 failed=1/2 (etcd-4 not listed)',
    });
  });

  it('a blackholed member that answered is a probe of some other cluster', () => {
    const found = checkProbe(sample(0, [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }, { i: 4, paths: 'timeout' }]), expected);
    expect(found).toEqual({ complete: false, says: 'listed=5/5 answered=3/3 failed=1/2 (etcd-3 answered through its blackhole)' });
  });
});
