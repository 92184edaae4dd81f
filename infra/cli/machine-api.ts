// `watch`'s Cluster API version: --machine-api when the management cluster serves it, otherwise
// the one its discovery prefers (functions/core/kubernetes/machine-api.ts). A discovery that does
// not answer is asked again, said once, as the request watch keeps trying its list.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { describeKubeError } from '../../functions/adapters/kube/api-errors.ts';
import { servedClusterApiVersions } from '../../functions/adapters/kube/cluster-api/served-versions.ts';
import { chooseMachineApi, MACHINE_API_VERSIONS, type MachineApiVersion } from '../../functions/core/kubernetes/index.ts';
import { UsageError } from './args.ts';
import { escapeControls } from './control-chars.ts';

export function machineApiFlag(value: string | undefined): MachineApiVersion | undefined {
  if (value === undefined) return undefined;
  const version = MACHINE_API_VERSIONS.find((v) => v === value);
  if (!version) throw new UsageError(`--machine-api: ${JSON.stringify(value)} is not ${MACHINE_API_VERSIONS.join(' or ')}`);
  return version;
}

const MAX_DELAY_MS = 30_000;

/** The version to read Cluster API in; undefined when a signal came first. A cluster that cannot serve one is a UsageError. */
export async function discoverMachineApi(
  management: KubeConfig,
  asked: MachineApiVersion | undefined,
  signalled: Promise<unknown>,
): Promise<MachineApiVersion | undefined> {
  let delay = 1_000;
  let said = false;
  let stop = false;
  void signalled.then(() => (stop = true));
  while (!stop) {
    let served: string[] | undefined;
    try {
      served = await servedClusterApiVersions(management);
    } catch (error) {
      if (!said)
        process.stderr.write(
          `${escapeControls(`Cluster API's versions not read yet from the management cluster's discovery (${describeKubeError(error).split('\n')[0]!.slice(0, 300)}); it keeps trying`)}\n`,
        );
      said = true;
      await Promise.race([sleep(delay), signalled]);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
      continue;
    }
    const choice = chooseMachineApi(served, asked);
    if (choice.kind === 'refused') throw new UsageError(asked ? `--machine-api: ${choice.why}` : choice.why);
    return choice.version;
  }
  return undefined;
}
