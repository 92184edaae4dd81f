// The Cluster API version a management cluster is read in when its access names none: what its
// discovery prefers (chooseMachineApi: v1beta2 where served, v1beta1 before Cluster API v1.11),
// asked once per management kubeconfig and kept for DISCOVERY_KEPT_MS, so a Cluster API upgraded
// under a long-running watcher is read in its new version within minutes; an ask that failed is
// asked again next time.
import type { KubeConfig } from '@kubernetes/client-node';
import { chooseMachineApi } from '../../../core/kubernetes/index.ts';
import type { KubeAccessConfig, MachineApiVersion } from '../../../ports/kube-access.ts';
import type { MachineApiSource } from './machines.ts';
import { servedClusterApiVersions } from './served-versions.ts';

/** How long a discovery's answer is kept: one ask per management cluster every few minutes, not one per read. */
export const DISCOVERY_KEPT_MS = 10 * 60_000;

const discovered = new Map<string, { found: Promise<MachineApiVersion>; at: number }>();

function discover(key: string, config: KubeConfig, now: number): Promise<MachineApiVersion> {
  const kept = discovered.get(key);
  if (kept && now - kept.at < DISCOVERY_KEPT_MS) return kept.found;
  const found = servedClusterApiVersions(config).then((served) => {
    const choice = chooseMachineApi(served);
    if (choice.kind === 'refused') throw new Error(choice.why);
    return choice.version;
  });
  const asked = { found, at: now };
  discovered.set(key, asked);
  found.catch(() => discovered.get(key) === asked && discovered.delete(key));
  return found;
}

/** The management access's version when it names one; otherwise its discovery's, on first need. */
export function machineApiOf(management: NonNullable<KubeAccessConfig['management']>, config: KubeConfig, now: () => number = Date.now): MachineApiSource {
  if (management.machineApiVersion) return management.machineApiVersion;
  const key = typeof management.kubeconfig === 'string' ? management.kubeconfig : 'in-cluster';
  return () => discover(key, config, now());
}
