// The actuator per cluster: a cluster whose directory entry names its Cluster API Machines gets
// the Machine actuator; any other gets the fallback (etcd-only unless the edge chose another).
import type { Actuator } from '../../../ports/actuator.ts';
import type { ClusterDirectory } from '../../../ports/cluster-directory.ts';
import { machineActuatorFor } from './machine-actuator.ts';

export function createClusterActuator(directory: ClusterDirectory, fallback: Actuator): Actuator {
  const machineActuators = new Map<string, Actuator>();
  return {
    name: `per-cluster (capi-machine where configured, else ${fallback.name})`,
    async replace(request) {
      const management = (await directory.get(request.clusterId)).kube?.management;
      if (!management) return fallback.replace(request);
      let actuator = machineActuators.get(request.clusterId);
      if (!actuator) {
        actuator = machineActuatorFor(management);
        machineActuators.set(request.clusterId, actuator);
      }
      return actuator.replace(request);
    },
  };
}
