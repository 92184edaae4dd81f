// --paths, as probe, plan, remediate and watch take it: exec-relay by name, and `exec`, its old
// name in scripts and manifests written for earlier builds, still read as exec-relay.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../infra/local/cli/args.ts';
import { clusterAccessFromFlags } from '../../../infra/local/cli/cluster-flags.ts';
import { pathsFlag } from '../../../infra/local/cli/watch.ts';
import { KUBECONFIG } from './helpers.ts';

describe('--paths', () => {
  it.each([
    ['exec', ['exec-relay']],
    ['exec-relay', ['exec-relay']],
    ['port-forward,exec', ['port-forward', 'exec-relay']],
    ['exec, port-forward', ['exec-relay', 'port-forward']],
  ])('watch --paths %s is %j', (flag, order) => {
    expect(pathsFlag(flag)).toEqual(order);
  });

  it('refuses exec beside exec-relay, and offers the current names only', () => {
    expect(() => pathsFlag('exec-relay,exec')).toThrow(new UsageError('--paths: exec is exec-relay, listed already'));
    expect(() => pathsFlag('ssh')).toThrow(new UsageError('--paths: "ssh" is not a path (use direct, port-forward, exec-relay)'));
  });

  describe('probe, plan and remediate', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paths-flag-'));
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
    const kubeconfig = path.join(dir, 'kc.yaml');
    fs.writeFileSync(kubeconfig, KUBECONFIG);

    it('--paths direct,exec is direct, then exec-relay', async () => {
      const cluster = await clusterAccessFromFlags({ endpoints: 'http://127.0.0.1:2379', kubeconfig, paths: 'direct,exec' });
      expect(cluster.policy.pathOrder).toEqual(['direct', 'exec-relay']);
    });

    it('without --paths, the kube paths under their current names', async () => {
      const cluster = await clusterAccessFromFlags({ kubeconfig });
      expect(cluster.policy.pathOrder).toEqual(['port-forward', 'exec-relay']);
    });
  });
});
