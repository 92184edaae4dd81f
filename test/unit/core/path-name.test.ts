// One name for the exec relay: `exec-relay`. Earlier builds wrote it `exec`, in state files,
// DynamoDB items, registrations and events; every edge reads that as exec-relay, once.
import { describe, expect, it } from 'vitest';
import { currentPathName, currentView, pathNameOf, pathNameSchema, PATH_SPELLINGS, type StoredView } from '../../../functions/core/path-name.ts';
import { defaultPolicy, parsePolicy, policySchema } from '../../../functions/core/policy.ts';
import { PATH_NAMES } from '../../../functions/core/types.ts';
import { view } from './fixtures.ts';
import { writtenByEarlierBuild } from '../../support/earlier-paths.ts';

describe('currentPathName', () => {
  it('reads exec, the old name, as exec-relay', () => {
    expect(currentPathName('exec')).toBe('exec-relay');
  });

  it.each(PATH_NAMES)('keeps %s, a current name, as it is', (name) => {
    expect(currentPathName(name)).toBe(name);
  });

  it('the current names are direct, port-forward and exec-relay; exec is only ever read', () => {
    expect(PATH_NAMES).toEqual(['direct', 'port-forward', 'exec-relay']);
    expect(PATH_SPELLINGS).toEqual(['direct', 'port-forward', 'exec-relay', 'exec']);
  });
});

describe('pathNameOf', () => {
  it.each([
    ['direct', 'direct'],
    ['exec-relay', 'exec-relay'],
    ['exec', 'exec-relay'],
  ] as const)('%s is %s', (written, path) => {
    expect(pathNameOf(written)).toBe(path);
  });

  it.each(['ssh', 'EXEC', ' exec', '', 'toString', '__proto__', 'hasOwnProperty'])('%j is no path', (written) => {
    expect(pathNameOf(written)).toBeUndefined();
  });
});

describe('currentView', () => {
  const today = view(1_000, [
    { i: 0, paths: { direct: 'refused', 'exec-relay': 'ok' } },
    { i: 1, leader: 0 },
    { i: 2, leader: 0, unstarted: true },
  ]);

  it('a view an earlier build stored, with exec, reads as today’s', () => {
    const earlier = JSON.parse(writtenByEarlierBuild(today)) as StoredView;
    expect(earlier.members[0]!.paths.map((p) => p.path)).toEqual(['direct', 'exec']);
    expect(currentView(earlier)).toEqual(today);
  });

  it('the list failures too', () => {
    const failed = {
      ...today,
      listFailures: [
        { path: 'exec' as const, endpoint: 'https://10.0.0.11:2379 via kube-system/etcd-cp-1', reachability: 'timeout' as const, latencyMs: 2_000 },
      ],
    };
    expect(currentView(failed).listFailures.map((p) => p.path)).toEqual(['exec-relay']);
  });

  it('a view of today’s reads as it is', () => {
    expect(currentView(today)).toEqual(today);
  });
});

describe('pathNameSchema and the policy', () => {
  it('parses either spelling to the current name', () => {
    expect(pathNameSchema.parse('exec')).toBe('exec-relay');
    expect(pathNameSchema.parse('exec-relay')).toBe('exec-relay');
  });

  it('refuses an unknown name, offering the current names only', () => {
    const parsed = pathNameSchema.safeParse('ssh');
    expect(parsed.error?.issues[0]?.message).toBe('must be one of "direct", "port-forward", "exec-relay"');
  });

  it('a policy with pathOrder ["direct", "exec"] is a policy of direct and exec-relay', () => {
    expect(parsePolicy({ pathOrder: ['direct', 'exec'] }).pathOrder).toEqual(['direct', 'exec-relay']);
  });

  it('every path by default, under its current name', () => {
    expect(defaultPolicy.pathOrder).toEqual(['direct', 'port-forward', 'exec-relay']);
  });

  it('a policy parsed once parses again to itself', () => {
    const policy = parsePolicy({ pathOrder: ['exec', 'port-forward'] });
    expect(policySchema.parse(policy)).toEqual(policy);
  });
});
