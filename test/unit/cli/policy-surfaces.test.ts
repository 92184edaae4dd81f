// Every surface a policy is written through (run's config, register's --policy file and its
// registration, the construct's defaults and the cold start reading them) takes every field of the
// policy schema and refuses any other, at any depth, naming it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRegistration } from '../../../functions/adapters/aws/cluster-registration.ts';
import { checkPolicyDefaults } from '../../../functions/adapters/aws/policy-defaults.ts';
import { policyDefaultsFromEnv } from '../../../functions/aws-wiring/policy-defaults-env.ts';
import { parsePolicy, policySchema, type Policy } from '../../../functions/core/policy/policy.ts';
import { UsageError } from '../../../infra/cli/args.ts';
import { clusterFromFlags } from '../../../infra/cli/cluster-flags.ts';
import { ConfigError, loadConfig, policyInputFromConfig } from '../../../infra/cli/config.ts';

const endpoints = ['http://127.0.0.1:2379'];

// Every field, none at its default, so a surface that drops one is seen. A field the schema gains
// fails the type check here until it is added.
const full = {
  graceMs: 61_000,
  allowRemoveWithoutLeaderMove: false,
  closeWhenRecovered: false,
  backoff: { baseMs: 2_000, capMs: 90_000 },
  maxAttempts: 4,
  incidentDeadlineMs: 600_000,
  maxRetry: 2,
  retryPeriodMs: 30_000,
  minHealthyPeriodMs: 7_200_000,
  pathOrder: ['direct'],
  electionTimeoutMs: 500,
  callTimeoutMs: 3_000,
  maxImmediateReprobes: 1,
  dryRun: true,
  snapshotBeforeRemove: false,
  snapshotRequired: false,
  snapshotTimeoutMs: 60_000,
  actuatorTimeoutMs: 120_000,
  lockLeaseMs: 15_000,
  guardPrefix: '/remediator-test',
  allowShrink: true,
  singleRemediator: true,
  fleet: { stormShare: 0.5, stormMinClusters: 3, stormWindowMs: 300_000, stormCooldownMs: 120_000, maxRemovalsInFlight: 2 },
  replacement: { windowMs: 600_000, checkEveryMs: 5_000 },
  stuckLearnerAfterMs: 300_000,
  learnerCheckEveryMs: 60_000,
  maintenance: {
    enabled: true,
    clearNoSpace: false,
    fragmentedShare: 0.6,
    fragmentedMinBytes: 100 * 1024 * 1024,
    nearQuotaShare: 0.7,
    memberEveryMs: 3_600_000,
    checkEveryMs: 60_000,
    defragmentDeadlineMs: 120_000,
  },
  hygiene: {
    enabled: true,
    dryRun: true,
    windowMs: 300_000,
    cooldownMs: 900_000,
    returnBlockMs: 3_600_000,
    maxMovesPerDay: 2,
    recentElectionsMs: 600_000,
    maxApplyLag: 500,
    checkEveryMs: 30_000,
    moveExpiryMs: 90_000,
    thresholds: {
      fsyncP99Ms: 400,
      commitP99Ms: 200,
      heartbeatFailureSamples: 4,
      heartbeatSamples: 8,
      outlierFactor: 8,
      outlierFsyncP99Ms: 50,
      outlierCommitP99Ms: 100,
      outlierMeanFactor: 2,
      healthyFsyncP99Ms: 8,
      healthyCommitP99Ms: 20,
      stallAnswerMs: 150,
      peerRoundTripMs: 120,
      peerOutlierFactor: 3,
      healthyPeerRoundTripMs: 8,
    },
  },
} satisfies Required<Policy>;

type Fields = Record<string, unknown>;
const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/** [path, value] of every leaf of a policy. */
const leaves = (fields: Fields, prefix: string[] = []): [string[], unknown][] =>
  Object.entries(fields).flatMap(([key, value]) => (isFields(value) ? leaves(value, [...prefix, key]) : [[[...prefix, key], value]]));

/** `{ a: { b: value } }` for the path a.b. */
const at = (keys: readonly string[], value: unknown): Fields => keys.reduceRight<Fields>((inner, key) => ({ [key]: inner }), value as Fields);

describe('one policy, every surface', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-surfaces-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  const runConfig = (policy: unknown): string => {
    const file = path.join(dir, `config-${++files}.json`);
    fs.writeFileSync(file, JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'prod', endpoints, policy }] }));
    return file;
  };

  it('the full policy lists every field of the schema, nested ones too', () => {
    expect(Object.keys(full).sort()).toEqual(Object.keys(policySchema.shape).sort());
    expect(Object.keys(full.backoff).sort()).toEqual(Object.keys(parsePolicy().backoff).sort());
    expect(parsePolicy(full)).toEqual(full);
  });

  it('run --config takes every field', () => {
    expect(loadConfig(runConfig(full)).clusters[0]!.policy).toEqual(full);
  });

  it('register --policy takes every field, and its registration keeps each', () => {
    const input = policyInputFromConfig(full);
    expect(input).toEqual(full);
    expect(checkRegistration({ clusterId: 'prod', endpoints, policy: input }, 'prod').policy).toEqual(full);
  });

  it('the construct’s defaults and the cold start take every field', () => {
    expect(checkPolicyDefaults(full)).toEqual(full);
    expect(checkRegistration({ clusterId: 'prod', endpoints }, 'prod', checkPolicyDefaults(full)).policy).toEqual(full);
  });

  // Every <name>Ms field, nested ones too, may be written "<n>ms" under <name> as well.
  const durations = leaves(full).filter(([keys]) => keys.at(-1)!.endsWith('Ms'));

  it('has durations to write', () => expect(durations.length).toBeGreaterThan(10));

  it.each(durations.map(([keys, ms]) => ({ field: keys.join('.'), keys, ms })))('$field is written as a duration too', ({ keys, ms }) => {
    const written = [...keys.slice(0, -1), keys.at(-1)!.slice(0, -2)];
    expect(policyInputFromConfig(at(written, `${String(ms)}ms`))).toEqual(at(keys, ms));
    expect(policyInputFromConfig(at(keys, ms))).toEqual(at(keys, ms));
  });
});

describe('unknown policy fields, at any depth', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-unknown-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    { policy: { graec: '60s' }, field: 'graec' },
    { policy: { backoff: { bse: '5s' } }, field: 'backoff.bse' },
    { policy: { backoff: { baseMs: 1_000, capSeconds: 5 } }, field: 'backoff.capSeconds' },
  ])('run --config refuses $field, naming it', ({ policy, field }) => {
    const file = path.join(dir, `${field}.json`);
    fs.writeFileSync(file, JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'prod', endpoints, policy }] }));
    expect(() => loadConfig(file)).toThrow(ConfigError);
    expect(() => loadConfig(file)).toThrow(`clusters[0].policy.${field}: is not a known field`);
  });

  it.each([
    { policy: { graec: '60s' }, field: 'graec' },
    { policy: { backoff: { bse: '5s' } }, field: 'backoff.bse' },
  ])('register --policy refuses $field, naming it', ({ policy, field }) => {
    expect(() => policyInputFromConfig(policy)).toThrow(ConfigError);
    expect(() => policyInputFromConfig(policy)).toThrow(`${field}: is not a known field`);
  });
});

describe('a typo, in the same words at every edge', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-typo-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const said = (edge: () => unknown): string => {
    try {
      edge();
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected the typo to be refused');
  };
  const typo = { backoff: { bse: '5s' } };

  // The cold start's words (POLICY_DEFAULTS), the construct's at synth (the same check), a
  // registration's as the directory reads it, and the CLI's for run --config and register --policy.
  it.each([
    {
      edge: 'the cold start',
      refuse: () => policyDefaultsFromEnv({ POLICY_DEFAULTS: JSON.stringify(typo) }, 'remediate'),
      named: 'POLICY_DEFAULTS: backoff.bse',
    },
    {
      edge: 'a registration',
      refuse: () => checkRegistration({ clusterId: 'prod', endpoints, policy: typo }, 'prod'),
      named: 'cluster prod: policy.backoff.bse',
    },
    { edge: 'register --policy', refuse: () => policyInputFromConfig(typo), named: 'backoff.bse' },
    {
      edge: 'run --config',
      refuse: () => {
        const file = path.join(dir, 'config.json');
        fs.writeFileSync(file, JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'prod', endpoints, policy: typo }] }));
        return loadConfig(file);
      },
      named: 'clusters[0].policy.backoff.bse',
    },
  ])('$edge: $named: is not a known field', ({ refuse, named }) => {
    expect(said(refuse)).toContain(`${named}: is not a known field`);
  });
});

describe('a call deadline of zero', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-call-timeout-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  // Every etcd call would time out before it is sent: refused wherever it is written, as --timeout 0 is.
  it.each([
    { policy: { callTimeout: '0s' }, says: 'clusters[0].policy.callTimeout: must be positive' },
    { policy: { callTimeoutMs: 0 }, says: 'clusters[0].policy.callTimeoutMs: must be positive' },
  ])('run --config refuses $policy', ({ policy, says }) => {
    const file = path.join(dir, `${Object.keys(policy)[0]!}.json`);
    fs.writeFileSync(file, JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'prod', endpoints, policy }] }));
    expect(() => loadConfig(file)).toThrow(says);
  });

  it('register and the construct’s defaults refuse it too', () => {
    expect(() => checkRegistration({ clusterId: 'prod', endpoints, policy: { callTimeoutMs: 0 } }, 'prod')).toThrow('cluster prod: policy.callTimeoutMs: ');
    expect(() => checkPolicyDefaults({ callTimeoutMs: 0 })).toThrow('callTimeoutMs: ');
  });
});

describe('the flags', () => {
  const flags = { endpoints: endpoints.join(',') };

  it('set only what they give: every other field is the schema’s default', () => {
    expect(clusterFromFlags(flags).policy).toEqual(parsePolicy({ pathOrder: ['direct'] }));
    expect(clusterFromFlags({ ...flags, timeout: '3s', 'election-timeout': '500ms', grace: '2m' }).policy).toEqual(
      parsePolicy({ pathOrder: ['direct'], callTimeoutMs: 3_000, electionTimeoutMs: 500, graceMs: 120_000 }),
    );
  });

  it.each([
    { given: { timeout: '0s' }, says: '--timeout: must be positive' },
    {
      given: { 'election-timeout': '50ms' },
      says: "--election-timeout: must be at least 100ms (etcd's default is 1s): evidence samples must be one election timeout apart",
    },
  ])('a value the policy refuses names the flag: $says', ({ given, says }) => {
    const make = () => clusterFromFlags({ ...flags, ...given });
    expect(make).toThrow(UsageError);
    expect(make).toThrow(says);
  });
});

describe('a backoff base over its cap', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-backoff-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const over = (baseMs: number, capMs: number) => `is ${baseMs} ms, over backoff.capMs (${capMs} ms): the first wait may not be longer than the longest`;
  const said = (edge: () => unknown): string => {
    try {
      edge();
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected the backoff to be refused');
  };
  let files = 0;
  const runConfig = (policy: unknown) => () => {
    const file = path.join(dir, `config-${++files}.json`);
    fs.writeFileSync(file, JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'prod', endpoints, policy }] }));
    return loadConfig(file);
  };

  it('is refused by the schema, naming the base and the cap; a base equal to the cap is taken', () => {
    expect(() => parsePolicy({ backoff: { baseMs: 10_000, capMs: 5_000 } })).toThrow(over(10_000, 5_000));
    expect(parsePolicy({ backoff: { baseMs: 5_000, capMs: 5_000 } }).backoff).toEqual({ baseMs: 5_000, capMs: 5_000 });
  });

  // The cap left out is its default, 5 min: a base of 10 min is over it too.
  it.each([
    {
      edge: 'run --config, as durations',
      refuse: runConfig({ backoff: { base: '10m', cap: '5m' } }),
      named: `clusters[0].policy.backoff.base: ${over(600_000, 300_000)}`,
    },
    {
      edge: 'run --config, the cap left out',
      refuse: runConfig({ backoff: { baseMs: 600_000 } }),
      named: `clusters[0].policy.backoff.baseMs: ${over(600_000, 300_000)}`,
    },
    {
      edge: 'register --policy',
      refuse: () => policyInputFromConfig({ backoff: { base: '10m', cap: '5m' } }),
      named: `backoff.base: ${over(600_000, 300_000)}`,
    },
    {
      edge: 'a registration',
      refuse: () => checkRegistration({ clusterId: 'prod', endpoints, policy: { backoff: { baseMs: 600_000 } } }, 'prod'),
      named: `cluster prod: policy.backoff.baseMs: ${over(600_000, 300_000)}`,
    },
    {
      edge: 'a registration over the stack’s defaults',
      refuse: () =>
        checkRegistration(
          { clusterId: 'prod', endpoints, policy: { backoff: { baseMs: 120_000 } } },
          'prod',
          checkPolicyDefaults({ backoff: { capMs: 60_000 } }),
        ),
      named: `cluster prod: policy.backoff.baseMs: ${over(120_000, 60_000)} (with the stack's policy defaults)`,
    },
    {
      edge: 'the construct’s defaults',
      refuse: () => checkPolicyDefaults({ backoff: { baseMs: 600_000 } }),
      named: `backoff.baseMs: ${over(600_000, 300_000)}`,
    },
    {
      edge: 'the cold start',
      refuse: () => policyDefaultsFromEnv({ POLICY_DEFAULTS: JSON.stringify({ backoff: { baseMs: 600_000 } }) }, 'remediate'),
      named: `POLICY_DEFAULTS: backoff.baseMs: ${over(600_000, 300_000)}`,
    },
  ])('$edge: refused naming the field', ({ refuse, named }) => {
    expect(said(refuse)).toContain(named);
  });
});
