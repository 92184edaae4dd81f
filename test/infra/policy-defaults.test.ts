// The construct's policyDefaults are checked at synth with the check a cold start makes: an
// unknown field, at any depth, fails synth naming it, rather than applying to no cluster; so does a
// policy that gives a step a budget beyond its function's timeout.
import { Stack } from 'aws-cdk-lib';
import { testApp } from './test-app.ts';
import { describe, expect, it } from 'vitest';
import { FUNCTION_TIMEOUTS_MS } from '../../functions/core/budget/step-timeouts.ts';
import { EtcdRemediation } from '../../infra/cdk/etcd-remediation.ts';
import { functionSpecs, stackFunctionNames } from '../../infra/cdk/function-specs.ts';

// Written as JSON or from JavaScript, a typo reaches the construct whatever its type says.
const refused: { policyDefaults: object; says: string }[] = [
  { policyDefaults: { graec: 120_000 }, says: 'EtcdRemediation: policyDefaults.graec: is not a known field' },
  { policyDefaults: { backoff: { bse: 1_000 } }, says: 'EtcdRemediation: policyDefaults.backoff.bse: is not a known field' },
  { policyDefaults: { electionTimeoutMs: 5 }, says: 'EtcdRemediation: policyDefaults.electionTimeoutMs: must be at least 100ms' },
  // Each valid alone, together beyond remediate's Lambda timeout.
  {
    policyDefaults: { snapshotBeforeRemove: true, actuatorTimeoutMs: 600_000 },
    says: 'EtcdRemediation: policyDefaults.actuatorTimeoutMs: remediate needs 994 s at 9 members (',
  },
  { policyDefaults: { callTimeoutMs: 10_000 }, says: 'EtcdRemediation: policyDefaults.callTimeoutMs: move-leader needs 690 s at 9 members (' },
];

describe('policyDefaults at synth', () => {
  it.each(refused)('refuses $policyDefaults: $says', ({ policyDefaults, says }) => {
    const scratch = new Stack(testApp(), 'Bad');
    expect(() => new EtcdRemediation(scratch, 'R', { policyDefaults })).toThrow(says);
  });
});

describe('the functions’ timeouts', () => {
  it.each(stackFunctionNames)('%s: its Lambda timeout is the one the budget rule holds policies to', (name) => {
    expect(functionSpecs[name].timeout.toMilliseconds()).toBe(FUNCTION_TIMEOUTS_MS[name]);
  });
});
