// The run config's Kubernetes access: the same rules as probe's flags, each problem naming the
// cluster and the field. Only what needs no API server: the Secret is read in the CLI tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, withKubeAccess } from '../../../infra/cli/config.ts';
import { KUBECONFIG } from '../runtime/helpers.ts';

const endpoints = ['http://127.0.0.1:2379'];

describe('a run config cluster reached through Kubernetes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'run-config-kube-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'kc.yaml'), KUBECONFIG);
  fs.writeFileSync(path.join(dir, 'workload.yaml'), KUBECONFIG.replace('127.0.0.1:1', '127.0.0.1:2'));
  fs.writeFileSync(path.join(dir, 'junk.yaml'), 'clusters: [unclosed\n');
  let n = 0;
  const configWith = (cluster: Record<string, unknown>): string => {
    const file = path.join(dir, `config-${(n += 1)}.json`);
    fs.writeFileSync(file, JSON.stringify({ state: 's.sqlite', clusters: [{ clusterId: 'prod', ...cluster }] }));
    return file;
  };
  const clusterOf = async (cluster: Record<string, unknown>) => (await withKubeAccess(loadConfig(configWith(cluster))))[0]!;

  it('kubeconfig alone is the workload cluster: no endpoints needed, the kube paths by default, no Machines', async () => {
    const cluster = await clusterOf({ kubeconfig: 'kc.yaml' });
    expect(cluster.endpoints).toEqual([]);
    expect(cluster.policy.pathOrder).toEqual(['port-forward', 'exec-relay']);
    expect(cluster.kube).toEqual({ workloadKubeconfig: KUBECONFIG });
  });

  it('with capiCluster it is the management cluster; workloadKubeconfig stands in for the Secret; paths in order', async () => {
    const cluster = await clusterOf({
      endpoints,
      kubeconfig: 'kc.yaml',
      capiCluster: 'wl',
      workloadKubeconfig: 'workload.yaml',
      paths: ['exec-relay', 'direct'],
    });
    expect(cluster.policy.pathOrder).toEqual(['exec-relay', 'direct']);
    expect(cluster.kube).toEqual({
      workloadKubeconfig: fs.readFileSync(path.join(dir, 'workload.yaml'), 'utf8'),
      management: { kubeconfig: KUBECONFIG, namespace: 'default', clusterName: 'wl' },
    });
  });

  it('endpoints alone: the direct path only', async () => {
    const cluster = await clusterOf({ endpoints });
    expect(cluster.policy.pathOrder).toEqual(['direct']);
    expect(cluster.kube).toBeUndefined();
  });

  it.each([
    {
      rule: 'neither endpoints nor kubeconfig',
      cluster: {},
      says: 'clusters[0].endpoints: is required, or kubeconfig to find the members through their etcd pods',
    },
    {
      rule: 'a kube path without kubeconfig',
      cluster: { endpoints, paths: ['direct', 'port-forward'] },
      says: 'clusters[0].paths (cluster prod): port-forward needs kubeconfig',
    },
    {
      rule: 'a kube path in policy.pathOrder without kubeconfig',
      cluster: { endpoints, policy: { pathOrder: ['exec-relay'] } },
      says: 'clusters[0].policy.pathOrder (cluster prod): exec-relay needs kubeconfig',
    },
    {
      rule: 'direct without endpoints',
      cluster: { kubeconfig: 'kc.yaml', paths: ['direct'] },
      says: 'clusters[0].paths (cluster prod): direct needs endpoints',
    },
    { rule: 'an unknown path', cluster: { kubeconfig: 'kc.yaml', paths: ['ssh'] }, says: 'clusters[0].paths (cluster prod): "ssh" is not a path' },
    {
      rule: 'a path named as an Object method',
      cluster: { kubeconfig: 'kc.yaml', paths: ['toString'] },
      says: 'clusters[0].paths (cluster prod): "toString" is not a path',
    },
    {
      rule: 'a path twice',
      cluster: { kubeconfig: 'kc.yaml', paths: ['exec-relay', 'port-forward', 'exec-relay'] },
      says: 'clusters[0].paths (cluster prod): exec-relay is listed twice',
    },
    {
      rule: 'exec in paths: the relay is exec-relay',
      cluster: { kubeconfig: 'kc.yaml', paths: ['exec', 'direct'] },
      says: 'clusters[0].paths (cluster prod): "exec" is not a path (use direct, port-forward, exec-relay)',
    },
    {
      rule: 'exec in policy.pathOrder: the relay is exec-relay',
      cluster: { kubeconfig: 'kc.yaml', policy: { pathOrder: ['exec'] } },
      says: 'clusters[0].policy.pathOrder[0]: must be one of "direct", "port-forward", "exec-relay"',
    },
    {
      rule: 'paths and policy.pathOrder',
      cluster: { endpoints, paths: ['direct'], policy: { pathOrder: ['direct'] } },
      says: 'clusters[0].paths: give it or policy.pathOrder, not both',
    },
    { rule: 'capiCluster without kubeconfig', cluster: { endpoints, capiCluster: 'wl' }, says: 'clusters[0].capiCluster (cluster prod): needs kubeconfig' },
    {
      rule: 'namespace without capiCluster',
      cluster: { kubeconfig: 'kc.yaml', namespace: 'capi' },
      says: 'clusters[0].namespace (cluster prod): needs kubeconfig and capiCluster',
    },
    {
      rule: 'workloadKubeconfig without capiCluster',
      cluster: { kubeconfig: 'kc.yaml', workloadKubeconfig: 'workload.yaml' },
      says: 'clusters[0].workloadKubeconfig (cluster prod): needs kubeconfig (the management cluster) and capiCluster',
    },
    { rule: 'an unreadable kubeconfig', cluster: { kubeconfig: 'gone.yaml' }, says: 'clusters[0].kubeconfig (cluster prod): cannot read gone.yaml: ENOENT' },
  ])('refuses $rule, naming the cluster and the field', ({ cluster, says }) => {
    const file = configWith(cluster);
    expect(() => loadConfig(file)).toThrow(ConfigError);
    expect(() => loadConfig(file)).toThrow(says);
  });

  it('refuses a file that is no kubeconfig once it reads it, naming the cluster and the field', async () => {
    await expect(clusterOf({ kubeconfig: 'kc.yaml', capiCluster: 'wl', workloadKubeconfig: 'junk.yaml' })).rejects.toThrow(
      'clusters[0].workloadKubeconfig (cluster prod): junk.yaml is not a kubeconfig',
    );
  });
});
