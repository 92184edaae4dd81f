// The policy schema is the one place every edge (CLI flags, the run config, a cluster directory)
// passes through, so what it refuses no edge can slip in.
import { describe, expect, it } from 'vitest';
import { MIN_ELECTION_TIMEOUT_MS, parsePolicy, policySchema, type PolicyInput } from '../../../functions/core/policy.ts';

describe('policy validation', () => {
  it.each([
    { input: { electionTimeoutMs: 0 }, field: 'electionTimeoutMs', says: /at least 100ms/ },
    { input: { electionTimeoutMs: 99 }, field: 'electionTimeoutMs', says: /at least 100ms/ },
    { input: { electionTimeoutMs: -5 }, field: 'electionTimeoutMs', says: /at least 100ms/ },
  ] satisfies { input: PolicyInput; field: string; says: RegExp }[])('refuses $input, naming $field', ({ input, field, says }) => {
    const parsed = policySchema.safeParse(input);
    expect(parsed.success).toBe(false);
    const issue = parsed.error?.issues[0];
    expect(issue?.path).toEqual([field]);
    expect(issue?.message).toMatch(says);
    expect(() => parsePolicy(input)).toThrow(/electionTimeoutMs/);
  });

  it.each([MIN_ELECTION_TIMEOUT_MS, 500, 1_000, 10_000])('accepts an election timeout of %i ms', (electionTimeoutMs) => {
    expect(parsePolicy({ electionTimeoutMs }).electionTimeoutMs).toBe(electionTimeoutMs);
  });

  it('keeps etcd’s default of 1 s', () => {
    expect(parsePolicy().electionTimeoutMs).toBe(1_000);
    expect(MIN_ELECTION_TIMEOUT_MS).toBe(100);
  });
});

describe('learner check', () => {
  it('looks every 5 minutes by default; 0 turns it off', () => {
    expect(parsePolicy().learnerCheckEveryMs).toBe(300_000);
    expect(parsePolicy({ learnerCheckEveryMs: 0 }).learnerCheckEveryMs).toBe(0);
  });

  it.each([-1, 1.5, Number.NaN])('refuses learnerCheckEveryMs %s, naming it', (learnerCheckEveryMs) => {
    const parsed = policySchema.safeParse({ learnerCheckEveryMs });
    expect(parsed.error?.issues[0]?.path).toEqual(['learnerCheckEveryMs']);
    expect(() => parsePolicy({ learnerCheckEveryMs })).toThrow(/learnerCheckEveryMs/);
  });
});

describe('unknown fields', () => {
  // A misspelt field would otherwise be dropped, and the default it meant to change would apply.
  it.each([
    { input: { graec: 1 }, path: [], key: 'graec' },
    { input: { backoff: { bse: 1 } }, path: ['backoff'], key: 'bse' },
  ])('refuses $key at $path', ({ input, path, key }) => {
    const parsed = policySchema.safeParse(input);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', path, keys: [key] })]);
  });
});
