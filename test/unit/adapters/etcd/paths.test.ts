import { describe, expect, it } from 'vitest';
import { directPaths } from '../../../../functions/adapters/etcd/path-resolvers.ts';

describe('directPaths', () => {
  const member = { id: 'a', name: 'a', clientUrls: ['https://10.0.0.1:2379', 'https://a:2379'], peerUrls: [], isLearner: false };

  it('reaches a member directly at its first client URL', () => {
    expect(directPaths.resolve(member, 'direct')).toBe('https://10.0.0.1:2379');
  });

  it('does not resolve kube-based paths or members that never started', () => {
    expect(directPaths.resolve(member, 'port-forward')).toBeUndefined();
    expect(directPaths.resolve(member, 'exec-relay')).toBeUndefined();
    expect(directPaths.resolve({ ...member, clientUrls: [] }, 'direct')).toBeUndefined();
  });
});
