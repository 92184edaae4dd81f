// The construct's policyDefaults are checked at synth with the check a cold start makes: an
// unknown field, at any depth, fails synth naming it, rather than applying to no cluster.
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { EtcdRemediation } from '../../infra/cdk/etcd-remediation.ts';

// Written as JSON or from JavaScript, a typo reaches the construct whatever its type says.
const refused: { policyDefaults: object; says: string }[] = [
  { policyDefaults: { graec: 120_000 }, says: 'EtcdRemediation: policyDefaults.graec: unknown field' },
  { policyDefaults: { backoff: { bse: 1_000 } }, says: 'EtcdRemediation: policyDefaults.backoff.bse: unknown field' },
  { policyDefaults: { electionTimeoutMs: 5 }, says: 'EtcdRemediation: policyDefaults.electionTimeoutMs: must be at least 100ms' },
];

describe('policyDefaults at synth', () => {
  it.each(refused)('refuses $policyDefaults: $says', ({ policyDefaults, says }) => {
    const scratch = new Stack(new App(), 'Bad');
    expect(() => new EtcdRemediation(scratch, 'R', { policyDefaults })).toThrow(says);
  });
});
