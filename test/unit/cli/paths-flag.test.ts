// --paths, as probe, plan, remediate and watch take it: each path by its one name, in order; `exec`
// is no name, and is refused naming the names there are.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../infra/cli/args.ts';
import { clusterAccessFromFlags } from '../../../infra/cli/cluster-flags.ts';
import { pathsFlag } from '../../../infra/cli/watch.ts';
import { KUBECONFIG } from '../runtime/helpers.ts';

describe('--paths', () => {
  it.each([
    ['exec-relay', ['exec-relay']],
    ['port-forward,exec-relay', ['port-forward', 'exec-relay']],
    ['exec-relay, port-forward', ['exec-relay', 'port-forward']],
  ])('watch --paths %s is %j', (flag, order) => {
    expect(pathsFlag(flag)).toEqual(order);
  });

  it.each(['exec', 'port-forward,exec', 'ssh'])('watch --paths %s is refused, naming --paths and the names there are', (flag) => {
    const wrong = flag.split(',').find((name) => name !== 'port-forward')!;
    expect(() => pathsFlag(flag)).toThrow(new UsageError(`--paths: ${JSON.stringify(wrong)} is not a path (use direct, port-forward, exec-relay)`));
  });

  it('refuses a path given twice', () => {
    expect(() => pathsFlag('exec-relay,port-forward,exec-relay')).toThrow(new UsageError('--paths: exec-relay is listed twice'));
  });

  describe('probe, plan and remediate', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paths-flag-'));
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
    const kubeconfig = path.join(dir, 'kc.yaml');
    fs.writeFileSync(kubeconfig, KUBECONFIG);

    it('--paths direct,exec-relay is direct, then exec-relay', async () => {
      const cluster = await clusterAccessFromFlags({ endpoints: 'http://127.0.0.1:2379', kubeconfig, paths: 'direct,exec-relay' });
      expect(cluster.policy.pathOrder).toEqual(['direct', 'exec-relay']);
    });

    it('--paths direct,exec is refused, naming --paths and exec-relay', async () => {
      await expect(clusterAccessFromFlags({ endpoints: 'http://127.0.0.1:2379', kubeconfig, paths: 'direct,exec' })).rejects.toThrow(
        new UsageError('--paths: "exec" is not a path (use direct, port-forward, exec-relay)'),
      );
    });

    it('without --paths, the kube paths under their current names', async () => {
      const cluster = await clusterAccessFromFlags({ kubeconfig });
      expect(cluster.policy.pathOrder).toEqual(['port-forward', 'exec-relay']);
    });
  });
});
