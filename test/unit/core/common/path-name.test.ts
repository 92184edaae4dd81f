// One name per path: direct, port-forward and exec-relay. Every edge reads exactly these, and
// refuses anything else (`exec` too) naming the names there are.
import { describe, expect, it } from 'vitest';
import { pathNameOf, pathNameSchema } from '../../../../functions/core/common/path-name.ts';
import { defaultPolicy, firstPolicyProblem } from '../../../../functions/core/policy/policy.ts';
import { PATH_NAMES } from '../../../../functions/core/common/types.ts';

const NAMES = 'must be one of "direct", "port-forward", "exec-relay"';

describe('pathNameOf', () => {
  it.each(PATH_NAMES)('%s is itself', (name) => {
    expect(pathNameOf(name)).toBe(name);
  });

  it.each(['exec', 'ssh', 'EXEC-RELAY', ' direct', '', 'toString', '__proto__', 'hasOwnProperty'])('%j is no path', (written) => {
    expect(pathNameOf(written)).toBeUndefined();
  });
});

describe('pathNameSchema and the policy', () => {
  it('parses a path name as itself', () => {
    expect(pathNameSchema.parse('exec-relay')).toBe('exec-relay');
  });

  it.each(['exec', 'ssh'])('refuses %j, offering the names there are', (written) => {
    expect(pathNameSchema.safeParse(written).error?.issues[0]?.message).toBe(NAMES);
  });

  it('a policy whose pathOrder says exec is refused at pathOrder, naming exec-relay', () => {
    expect(firstPolicyProblem({ pathOrder: ['direct', 'exec'] })).toEqual({ field: 'pathOrder.1', problem: NAMES });
  });

  it('every path by default, in the order PATH_NAMES lists them', () => {
    expect(PATH_NAMES).toEqual(['direct', 'port-forward', 'exec-relay']);
    expect(defaultPolicy.pathOrder).toEqual(['direct', 'port-forward', 'exec-relay']);
  });
});
