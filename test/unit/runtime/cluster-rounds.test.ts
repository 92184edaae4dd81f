// The embedded runtime's periodic checks (here the learner check) when a cluster's entry cannot be read (its secrets
// refused, say): the failure is logged, never thrown, the rounds go on, and stop() ends them.
import { describe, expect, it } from 'vitest';
import type { ClusterDeps } from '../../../functions/app/common/deps.ts';
import { parsePolicy } from '../../../functions/core/policy/policy.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { systemClock } from '../../../functions/lib/system-clock.ts';
import { clusterRounds, learnerCheck } from '../../../infra/runtime/cluster-rounds.ts';

describe('learner checks on the embedded runtime', () => {
  it('log a failed check and go on checking, a period apart (never at once again), until stopped', async () => {
    const gets: number[] = [];
    const errors: { message: string; keys: Record<string, unknown> }[] = [];
    const policy = parsePolicy({ learnerCheckEveryMs: 100 });
    let listed = 0;
    const deps = {
      clock: systemClock,
      directory: {
        registeredClusterIds: async () => {
          listed++;
          return ['broken'];
        },
        // The first read gives the policy (the cluster is noted); every later one fails.
        get: async (clusterId: string) => {
          gets.push(Date.now());
          if (gets.length === 1) return { clusterId, endpoints: [], policy };
          throw new Error('secret etcd-remediator/broken: AccessDenied');
        },
      },
      log: {
        error: (message: string, keys: Record<string, unknown>) => void errors.push({ message, keys }),
        warn: () => undefined,
        info: () => undefined,
        debug: () => undefined,
      },
    } as unknown as ClusterDeps;

    const checks = clusterRounds(deps, learnerCheck);
    checks.start();
    await waitFor(async () => (errors.length >= 2 ? true : undefined), { timeoutMs: 3_000, what: 'two failed checks logged' });
    await checks.stop();
    const seenAtStop = { gets: gets.length, listed };
    expect(errors[0]).toEqual({
      message: 'learner check failed; tried again a period later',
      keys: { clusterId: 'broken', error: 'Error: secret etcd-remediator/broken: AccessDenied' },
    });
    // A period apart, give or take the timer.
    expect(gets[2]! - gets[1]!).toBeGreaterThanOrEqual(90);
    // Stopped: no round after.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect({ gets: gets.length, listed }).toEqual(seenAtStop);
  });
});
