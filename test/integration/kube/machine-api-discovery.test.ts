// The Cluster API version a management cluster is read in, when its access names none: asked of the
// FAKE API server's discovery once per management kubeconfig, kept for DISCOVERY_KEPT_MS (a watcher
// that runs for weeks picks up a Cluster API upgraded under it), asked again past that, and never
// kept when the ask failed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DISCOVERY_KEPT_MS, machineApiOf } from '../../../functions/adapters/kube/cluster-api/machine-api-version.ts';
import { resolveMachineApi } from '../../../functions/adapters/kube/cluster-api/machines.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';

let fake: KubeApiFake;
beforeEach(async () => {
  fake = await startKubeApiFake();
});
afterEach(() => fake.stop());

const asks = (): number => fake.requests.filter((r) => r.method === 'GET' && r.path === '/apis').length;

describe('the discovered Cluster API version', () => {
  it('is asked once, kept for DISCOVERY_KEPT_MS, then asked again', async () => {
    let now = 1_000_000;
    // Its own kubeconfig text: no other case's discovery is remembered for it.
    const management = { kubeconfig: `${fake.kubeconfigYaml()}\n# kept, then asked again\n`, namespace: 'capi', clusterName: 'wl' };
    const source = machineApiOf(management, fake.kubeConfig(), () => now);
    expect(await resolveMachineApi(source)).toBe('v1beta2');
    now += DISCOVERY_KEPT_MS - 1;
    expect(await resolveMachineApi(source)).toBe('v1beta2');
    expect(asks()).toBe(1);
    now += 1;
    expect(await resolveMachineApi(source)).toBe('v1beta2');
    expect(asks()).toBe(2);
  });

  it('an ask that failed is not kept: the next need asks again', async () => {
    fake.failNext({ method: 'GET', path: /^\/apis$/, status: 503 });
    const management = { kubeconfig: `${fake.kubeconfigYaml()}\n# refused once\n`, namespace: 'capi', clusterName: 'wl' };
    const source = machineApiOf(management, fake.kubeConfig(), () => 5_000);
    await expect(resolveMachineApi(source)).rejects.toThrow(/503/);
    expect(await resolveMachineApi(source)).toBe('v1beta2');
    expect(asks()).toBe(2);
  });

  it('a version the access names is used as it is, without asking', async () => {
    const management = { kubeconfig: fake.kubeconfigYaml(), namespace: 'capi', clusterName: 'wl', machineApiVersion: 'v1beta1' as const };
    expect(await resolveMachineApi(machineApiOf(management, fake.kubeConfig()))).toBe('v1beta1');
    expect(asks()).toBe(0);
  });
});
