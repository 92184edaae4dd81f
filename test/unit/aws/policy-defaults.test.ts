// POLICY_DEFAULTS: checked at a cold start (the variable and the field named), then laid under
// each cluster's own policy, the cluster's fields winning.
import { describe, expect, it } from 'vitest';
import { checkRegistration, ClusterRegistrationError } from '../../../functions/adapters/aws/cluster-registration.ts';
import { checkPolicyDefaults, underDefaults } from '../../../functions/adapters/aws/policy-defaults.ts';
import { clusterDepsFromEnv } from '../../../functions/aws-wiring/cluster-deps.ts';
import { InvalidEnvError } from '../../../functions/aws-wiring/env.ts';
import { awsIntakeDepsFromEnv } from '../../../functions/aws-wiring/intake-deps.ts';
import { policyDefaultsFromEnv } from '../../../functions/aws-wiring/policy-defaults-env.ts';
import { defaultPolicy } from '../../../functions/core/policy/policy.ts';
import { fullEnv } from './env-fixture.ts';

const full = fullEnv;

describe('underDefaults', () => {
  it("keeps the defaults a cluster leaves out, and the cluster's own fields over them", () => {
    expect(underDefaults({ graceMs: 120_000, electionTimeoutMs: 500, dryRun: true }, { graceMs: 30_000 })).toEqual({
      graceMs: 30_000,
      electionTimeoutMs: 500,
      dryRun: true,
    });
  });

  it('merges backoff field by field; an array (pathOrder) is the cluster’s whole', () => {
    const defaults = { backoff: { baseMs: 1_000, capMs: 60_000 }, pathOrder: ['direct', 'exec-relay'] as const };
    expect(underDefaults({ ...defaults, pathOrder: [...defaults.pathOrder] }, { backoff: { capMs: 10_000 }, pathOrder: ['exec-relay'] })).toEqual({
      backoff: { baseMs: 1_000, capMs: 10_000 },
      pathOrder: ['exec-relay'],
    });
  });

  it('no defaults: the cluster’s policy as it is; a field the cluster leaves undefined takes the default', () => {
    expect(underDefaults(undefined, { graceMs: 1_000 })).toEqual({ graceMs: 1_000 });
    expect(underDefaults({ maxRetry: 3 }, { maxRetry: undefined })).toEqual({ maxRetry: 3 });
  });
});

describe('a registration read with defaults', () => {
  const registration = {
    clusterId: 'prod',
    endpoints: ['https://10.0.0.1:2379'],
    pathOrder: ['direct'],
    policy: { graceMs: 30_000, backoff: { baseMs: 2_000 } },
  };

  it('parses the merged policy: the cluster’s fields, then the defaults, then the built-in ones', () => {
    const { policy } = checkRegistration(registration, 'prod', {
      graceMs: 120_000,
      electionTimeoutMs: 500,
      backoff: { capMs: 60_000 },
      pathOrder: ['exec-relay'],
    });
    expect(policy).toEqual({ ...defaultPolicy, graceMs: 30_000, electionTimeoutMs: 500, backoff: { baseMs: 2_000, capMs: 60_000 }, pathOrder: ['direct'] });
  });

  it('a pathOrder in the defaults does not clash with the registration’s shorthand', () => {
    expect(checkRegistration({ ...registration, policy: {} }, 'prod', { pathOrder: ['exec-relay', 'direct'] }).policy.pathOrder).toEqual(['direct']);
  });

  // The relay's one name is exec-relay: `exec` is refused where it arrives, naming the field and the names there are.
  const names = 'must be one of "direct", "port-forward", "exec-relay"';
  it.each([
    { where: 'the shorthand', registration: { ...registration, pathOrder: ['direct', 'exec'] }, says: `cluster prod: pathOrder.1: ${names}` },
    {
      where: 'policy.pathOrder',
      registration: { ...registration, pathOrder: undefined, policy: { pathOrder: ['exec'] } },
      says: `cluster prod: policy.pathOrder.0: ${names}`,
    },
  ])('exec in $where is refused: $says', ({ registration: given, says }) => {
    const check = () => checkRegistration(given, 'prod');
    expect(check).toThrow(ClusterRegistrationError);
    expect(check).toThrow(says);
  });

  it('exec in the defaults is refused, naming pathOrder and exec-relay', () => {
    expect(() => checkPolicyDefaults({ pathOrder: ['direct', 'exec'] })).toThrow(`pathOrder.1: ${names}`);
  });

  it.each([
    { policy: { graec: 1 }, says: 'cluster prod: policy.graec: is not a known field' },
    { policy: { backoff: { bse: 1 } }, says: 'cluster prod: policy.backoff.bse: is not a known field' },
  ])('refuses an unknown policy field at any depth, naming it: $says', ({ policy, says }) => {
    expect(() => checkRegistration({ ...registration, policy }, 'prod')).toThrow(says);
  });

  it('without defaults, as before', () => {
    expect(checkRegistration(registration, 'prod').policy).toEqual({
      ...defaultPolicy,
      graceMs: 30_000,
      backoff: { baseMs: 2_000, capMs: 300_000 },
      pathOrder: ['direct'],
    });
  });
});

describe('checkPolicyDefaults', () => {
  it.each([
    { value: { grace: '60s' }, says: 'grace: is not a known field' },
    { value: { backoff: { base: 5 } }, says: 'backoff.base: is not a known field' },
    { value: { electionTimeoutMs: 5 }, says: 'electionTimeoutMs: must be at least 100ms' },
    { value: { backoff: { capMs: -1 } }, says: 'backoff.capMs: ' },
    { value: { pathOrder: ['ssh'] }, says: 'pathOrder.0: ' },
    { value: [], says: '(the value): must be a JSON object of policy fields' },
    { value: null, says: '(the value): must be a JSON object of policy fields' },
  ])('refuses $value: $says', ({ value, says }) => {
    expect(() => checkPolicyDefaults(value)).toThrow(says);
  });

  it('returns what it was given, unparsed, so only the fields it names are defaults', () => {
    expect(checkPolicyDefaults({ graceMs: 120_000 })).toEqual({ graceMs: 120_000 });
    expect(checkPolicyDefaults({})).toEqual({});
  });
});

describe('POLICY_DEFAULTS at a cold start', () => {
  it('unset or empty: no defaults', () => {
    expect(policyDefaultsFromEnv({}, 'intake')).toBeUndefined();
    expect(policyDefaultsFromEnv({ POLICY_DEFAULTS: ' ' }, 'intake')).toBeUndefined();
    expect(policyDefaultsFromEnv({ POLICY_DEFAULTS: '{"graceMs":120000}' }, 'intake')).toEqual({ graceMs: 120_000 });
  });

  it.each([
    { raw: '{"graceMs":', says: /^remediate: environment variable POLICY_DEFAULTS: is not JSON \(.+\); the stack sets it on the function \(see infra\/cdk\)$/ },
    { raw: '{"graceMs":-1}', says: /^remediate: environment variable POLICY_DEFAULTS: graceMs: .+; the stack sets it/ },
    { raw: '{"grace":"60s"}', says: /^remediate: environment variable POLICY_DEFAULTS: grace: is not a known field; / },
    { raw: '{"backoff":{"bse":"5s"}}', says: /^remediate: environment variable POLICY_DEFAULTS: backoff\.bse: is not a known field; / },
    { raw: '"60s"', says: /^remediate: environment variable POLICY_DEFAULTS: \(the value\): must be a JSON object/ },
  ])('$raw fails the cold start of a pipeline function, naming the variable', ({ raw, says }) => {
    const build = () => clusterDepsFromEnv({ ...full, POLICY_DEFAULTS: raw }, 'remediate');
    expect(build).toThrow(InvalidEnvError);
    expect(build).toThrow(says);
  });

  it('the intake’s too', () => {
    expect(() => awsIntakeDepsFromEnv({ TABLE_NAME: 't', BUS_NAME: 'b', AWS_REGION: 'eu-west-1', POLICY_DEFAULTS: '{"electionTimeoutMs":5}' })).toThrow(
      'intake: environment variable POLICY_DEFAULTS: electionTimeoutMs: must be at least 100ms',
    );
  });

  it('what the construct writes for no defaults ({}) builds', () => {
    expect(Object.keys(clusterDepsFromEnv({ ...full, POLICY_DEFAULTS: '{}' }, 'remediate'))).toContain('directory');
  });
});
