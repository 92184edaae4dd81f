import { describe, it, expect } from 'vitest';
import { rankMoveCandidates } from '../../../../functions/core/plan/candidates.ts';
import { id, view, type MemberSpec } from '../fixtures.ts';

const names = (specs: MemberSpec[], target = 0, exclude: number[] = []): string[] =>
  rankMoveCandidates(view(1, specs), id(target), exclude.map(id)).map((m) => m.name);

describe('rankMoveCandidates', () => {
  it.each([
    {
      name: 'highest applied index first',
      specs: [{ i: 0 }, { i: 1, applied: 90 }, { i: 2, applied: 120 }, { i: 3, applied: 100 }],
      want: ['etcd-2', 'etcd-3', 'etcd-1'],
    },
    {
      name: 'then lowest latency',
      specs: [{ i: 0 }, { i: 1, latencyMs: 30 }, { i: 2, latencyMs: 3 }, { i: 3, latencyMs: 12 }],
      want: ['etcd-2', 'etcd-3', 'etcd-1'],
    },
    {
      name: 'then name',
      specs: [{ i: 0 }, { i: 3, latencyMs: 7 }, { i: 1, latencyMs: 7 }, { i: 2, latencyMs: 7 }],
      want: ['etcd-1', 'etcd-2', 'etcd-3'],
    },
    {
      name: 'applied index beats latency',
      specs: [{ i: 0 }, { i: 1, applied: 99, latencyMs: 1 }, { i: 2, applied: 100, latencyMs: 50 }],
      want: ['etcd-2', 'etcd-1'],
    },
    {
      name: 'never a learner, an unreachable, alarmed, erroring or unstarted member',
      specs: [
        { i: 0 },
        { i: 1, learner: true, applied: 500 },
        { i: 2, paths: 'refused' },
        { i: 3, alarms: ['CORRUPT'] },
        { i: 4, errors: ['boom'] },
        { i: 5, unstarted: true },
        { i: 6 },
      ],
      want: ['etcd-6'],
    },
    {
      name: 'reachable on a later path only still counts',
      specs: [{ i: 0 }, { i: 1, paths: { direct: 'refused', 'exec-relay': 'ok' } }],
      want: ['etcd-1'],
    },
  ] as { name: string; specs: MemberSpec[]; want: string[] }[])('$name', ({ specs, want }) => {
    expect(names(specs)).toEqual(want);
  });

  it('never the target, nor members being remediated', () => {
    const specs = [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }];
    expect(names(specs, 1, [2])).toEqual(['etcd-0', 'etcd-3']);
    expect(names(specs, 1, [0, 2, 3])).toEqual([]);
  });
});
