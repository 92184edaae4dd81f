// The policy schema is the one place every edge (CLI flags, the run config, a cluster directory)
// passes through, so what it refuses no edge can slip in.
import { describe, expect, it } from 'vitest';
import { MIN_ELECTION_TIMEOUT_MS, parsePolicy, policySchema, type PolicyInput } from '../../../../functions/core/policy/policy.ts';

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

describe('leader hygiene', () => {
  it('is off by default, with the windows and levels of the etcd mixin', () => {
    expect(parsePolicy().hygiene).toEqual({
      enabled: false,
      dryRun: false,
      windowMs: 600_000,
      cooldownMs: 1_800_000,
      returnBlockMs: 7_200_000,
      maxMovesPerDay: 3,
      recentElectionsMs: 900_000,
      maxApplyLag: 1_000,
      checkEveryMs: 60_000,
      moveExpiryMs: 120_000,
      thresholds: {
        fsyncP99Ms: 500,
        commitP99Ms: 250,
        heartbeatFailureSamples: 3,
        heartbeatSamples: 10,
        outlierFactor: 16,
        outlierFsyncP99Ms: 100,
        outlierCommitP99Ms: 125,
        outlierMeanFactor: 4,
        healthyFsyncP99Ms: 10,
        healthyCommitP99Ms: 25,
        stallAnswerMs: 250,
        peerRoundTripMs: 150,
        peerOutlierFactor: 4,
        healthyPeerRoundTripMs: 10,
      },
    });
  });

  it('keeps the defaults of the fields left out', () => {
    const hygiene = parsePolicy({ hygiene: { enabled: true, thresholds: { fsyncP99Ms: 200 } } }).hygiene;
    expect(hygiene.enabled).toBe(true);
    expect(hygiene.cooldownMs).toBe(1_800_000);
    expect(hygiene.thresholds).toMatchObject({ fsyncP99Ms: 200, commitP99Ms: 250 });
  });

  it.each([
    { input: { hygiene: { windowMs: 0 } }, path: ['hygiene', 'windowMs'] },
    { input: { hygiene: { maxMovesPerDay: 0 } }, path: ['hygiene', 'maxMovesPerDay'] },
    { input: { hygiene: { maxApplyLag: -1 } }, path: ['hygiene', 'maxApplyLag'] },
    { input: { hygiene: { thresholds: { fsyncP99Ms: 0 } } }, path: ['hygiene', 'thresholds', 'fsyncP99Ms'] },
    { input: { hygiene: { thresholds: { outlierFactor: 0.5 } } }, path: ['hygiene', 'thresholds', 'outlierFactor'] },
    { input: { hygiene: { thresholds: { heartbeatFailureSamples: 11 } } }, path: ['hygiene', 'thresholds', 'heartbeatFailureSamples'] },
  ] satisfies { input: PolicyInput; path: string[] }[])('refuses $input, naming $path', ({ input, path }) => {
    const parsed = policySchema.safeParse(input);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(path);
  });

  it('refuses an unknown field inside it', () => {
    const parsed = policySchema.safeParse({ hygiene: { enable: true } });
    expect(parsed.error?.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', path: ['hygiene'], keys: ['enable'] })]);
  });
});
