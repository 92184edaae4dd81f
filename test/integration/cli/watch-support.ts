// `watch` as a real process serving a request: MachineHealthCheck's part played by the test.
import { requestsIn, type StatusSeen } from '../kube/remediation-requests.ts';
import { CAPI_CLUSTER, CAPI_NAMESPACE, type KubeWorld } from '../kube/kube-world.ts';
import type { Service } from './support.ts';

/** The line `watch` prints once its first list of requests came back (and not the line saying it has not). */
export const WATCHING = /^watching EtcdRemediationRequests;/m;

/**
 * Once `service` is watching, creates the request for `machine` in the world's cluster as MHC does;
 * resolves with the request's status once `ended` accepts it.
 */
export async function requestServed(
  service: Service,
  world: KubeWorld,
  machine: string,
  ended: (status: StatusSeen) => boolean,
  what: string,
  timeoutMs: number,
): Promise<StatusSeen> {
  await service.waitForStderr(WATCHING);
  const requests = requestsIn(world.fake.kubeConfig(), CAPI_NAMESPACE);
  await requests.create(machine, CAPI_CLUSTER);
  return service.until(
    async () => {
      const seen = await requests.statusOf(machine);
      return seen && ended(seen) ? seen : undefined;
    },
    what,
    timeoutMs,
  );
}
