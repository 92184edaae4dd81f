// The Node an Event goes on, with its uid read from the workload cluster's Node list (by name, the
// list the probes already may make); the name stands in when the Node cannot be read.
import type { CoreV1Api } from '@kubernetes/client-node';
import { nodeReference, type InvolvedObject } from '../../core/kubernetes/index.ts';

export async function readNodeReference(core: CoreV1Api, name: string): Promise<InvolvedObject> {
  const listed = await core.listNode({ fieldSelector: `metadata.name=${name}` }).catch(() => undefined);
  return nodeReference(name, listed?.items.find((node) => node.metadata?.name === name)?.metadata?.uid);
}
