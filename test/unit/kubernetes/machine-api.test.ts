import { describe, expect, it } from 'vitest';
import { chooseMachineApi } from '../../../functions/core/kubernetes/machine-api.ts';

describe('chooseMachineApi', () => {
  it.each([
    ['Cluster API v1.11 to v1.15: both served', ['v1beta2', 'v1beta1'], undefined, { kind: 'chosen', version: 'v1beta2', by: 'discovered' }],
    ['from April 2027: v1beta2 alone', ['v1beta2'], undefined, { kind: 'chosen', version: 'v1beta2', by: 'discovered' }],
    [
      'before v1.11: v1beta1 alone (v1alpha4 beside it is not ours)',
      ['v1beta1', 'v1alpha4'],
      undefined,
      { kind: 'chosen', version: 'v1beta1', by: 'discovered' },
    ],
    ['asked for v1beta1 where both are served', ['v1beta2', 'v1beta1'], 'v1beta1', { kind: 'chosen', version: 'v1beta1', by: 'asked' }],
  ] as const)('%s', (_what, served, asked, expected) => {
    expect(chooseMachineApi(served, asked)).toEqual(expected);
  });

  it.each([
    ['no cluster.x-k8s.io group at all', undefined, undefined, /serves no cluster\.x-k8s\.io API: Cluster API is not installed there/],
    ['asked for v1beta1 where v1beta2 alone is served', ['v1beta2'], 'v1beta1', /^the management cluster serves cluster\.x-k8s\.io v1beta2, not v1beta1$/],
    ['only versions this release does not read', ['v1alpha4'], undefined, /serves cluster\.x-k8s\.io v1alpha4, none of v1beta2 or v1beta1/],
  ] as const)('refused: %s', (_what, served, asked, says) => {
    const choice = chooseMachineApi(served, asked);
    expect(choice.kind).toBe('refused');
    expect(choice.kind === 'refused' ? choice.why : '').toMatch(says);
  });
});
