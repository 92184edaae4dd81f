import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeOf } from '../../../infra/cli/output.ts';

describe('exit codes of a result', () => {
  it('follow the outcome: 0 planned or completed, 6 awaiting replacement, 3 blocked, 4 failed, 5 closed with nothing removed', () => {
    expect([
      exitCodeOf('planned'),
      exitCodeOf('completed'),
      exitCodeOf('awaiting-replacement'),
      exitCodeOf('blocked', 'QUORUM_AT_RISK'),
      exitCodeOf('failed', 'ACTUATOR_FAILED'),
      exitCodeOf('closed', 'TARGET_RECOVERED'),
    ]).toEqual([0, 0, 6, 3, 4, 5]);
  });

  it('are 2 for a block that says the input was wrong: endpoints of two etcd clusters', () => {
    expect(exitCodeOf('blocked', 'CLUSTER_MISMATCH')).toBe(EXIT.usage);
  });
});
