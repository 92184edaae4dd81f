// A lab cluster remediated through the deployed-stack sim: registered in the stack's table,
// reported on its bus as an outside source would, and the removal record the functions keep in
// the cluster's own etcd. Shared by the seed case on the AWS wiring and the fault matrix's case 21.
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { Etcd3 } from 'etcd3';
import { putCluster } from '../../../functions/adapters/aws/cluster-registration.ts';
import type { PolicyInput } from '../../../functions/core/policy/policy.ts';
import type { RemovalRecord } from '../../../functions/core/replacement/replacement.ts';
import type { Lab } from '../../../infra/lab/lab.ts';
import type { DeployedStack } from './deployed-stack.ts';

/** The lab as cluster "lab" in the stack's DynamoDB directory, with this policy. */
export async function registerLab(stack: DeployedStack, lab: Lab, policy: PolicyInput, clusterId = 'lab'): Promise<void> {
  await putCluster(stack.dynalite.client(), stack.tableName, { clusterId, endpoints: lab.endpoints(), policy });
}

/** MemberUnhealthy for a member, put on the stack's bus with the real SDK client; the FailedEntryCount it got. */
export async function reportUnhealthy(stack: DeployedStack, memberName: string, clusterId = 'lab'): Promise<number> {
  const client = new EventBridgeClient({
    endpoint: stack.eventBridge.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDFAKE', secretAccessKey: 'fake-secret' },
  });
  try {
    const now = new Date().toISOString();
    const detail = { clusterId, target: { memberName }, reason: 'kubelet down', source: 'test', observedAt: now, at: now, attempt: 0 };
    const sent = await client.send(
      new PutEventsCommand({
        Entries: [{ EventBusName: stack.busName, Source: 'etcd-remediator', DetailType: 'MemberUnhealthy', Detail: JSON.stringify(detail) }],
      }),
    );
    return sent.FailedEntryCount ?? 0;
  } finally {
    client.destroy();
  }
}

/** The removal record every remediator writes into the cluster's etcd before each MemberRemove. */
export async function removalsRecorded(lab: Lab): Promise<Partial<RemovalRecord>[]> {
  const leader = await lab.waitForLeader({ timeoutMs: 10_000 });
  const etcd = new Etcd3({ hosts: leader.directUrl });
  try {
    return JSON.parse((await etcd.get('/etcd-remediator/removals').string()) ?? '[]') as Partial<RemovalRecord>[];
  } finally {
    etcd.close();
  }
}
