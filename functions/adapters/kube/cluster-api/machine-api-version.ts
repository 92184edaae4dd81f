// The Cluster API version a management cluster is read in when its access names none: what its
// discovery prefers (chooseMachineApi: v1beta2 where served, v1beta1 before Cluster API v1.11),
// asked once per management kubeconfig and kept; an ask that failed is asked again next time.
import type { KubeConfig } from '@kubernetes/client-node';
import { chooseMachineApi } from '../../../core/kubernetes/index.ts';
import type { KubeAccessConfig, MachineApiVersion } from '../../../ports/kube-access.ts';
import type { MachineApiSource } from './machines.ts';
import { servedClusterApiVersions } from './served-versions.ts';

const discovered = new Map<string, Promise<MachineApiVersion>>();

function discover(key: string, config: KubeConfig): Promise<MachineApiVersion> {
  let found = discovered.get(key);
  if (!found) {
    found = servedClusterApiVersions(config).then((served) => {
      const choice = chooseMachineApi(served);
      if (choice.kind === 'refused') throw new Error(choice.why);
      return choice.version;
    });
    discovered.set(key, found);
    found.catch(() => discovered.delete(key));
  }
  return found;
}

/** The management access's version when it names one; otherwise its discovery's, on first need. */
export function machineApiOf(management: NonNullable<KubeAccessConfig['management']>, config: KubeConfig): MachineApiSource {
  if (management.machineApiVersion) return management.machineApiVersion;
  const key = typeof management.kubeconfig === 'string' ? management.kubeconfig : 'in-cluster';
  return () => discover(key, config);
}
