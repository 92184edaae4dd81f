// `etcd-remediator watch --bus --table` as a real process: requests from the FAKE management API
// server go to the EventBridge FAKE through the real SDK, and the incident the stack opens is
// followed in a real DynamoDB-API table (dynalite), written as the stack's functions write it.
import { conditionReason } from '../../../functions/core/kubernetes/index.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detailSchemas } from '../../../events/catalogue.ts';
import { createDynamoIncidentStore } from '../../../functions/adapters/aws/dynamodb-store.ts';
import { REQUEST_GROUP, REQUEST_PLURAL, REQUEST_VERSION } from '../../../functions/adapters/kube/cluster-api/remediation-requests.ts';
import type { IncidentStore } from '../../../functions/ports/incident-store.ts';
import { waitFor } from '../../../functions/lib/wait-for.ts';
import { startDynalite, type Dynalite } from '../../support/dynalite.ts';
import { startEventBridgeFake, type EventBridgeFake } from '../../support/fakes/eventbridge-fake.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { resourceType } from '../../support/fakes/kube/store.ts';
import { killService, runCli, startCli, type Service } from './support.ts';

const EVENTS = resourceType('', 'events')!;
const coordinates = { group: REQUEST_GROUP, version: REQUEST_VERSION, namespace: 'default', plural: REQUEST_PLURAL };

describe.sequential('etcd-remediator watch --bus', () => {
  let kube: KubeApiFake;
  let events: EventBridgeFake;
  let dynamo: Dynalite;
  let table: string;
  let store: IncidentStore;
  let dir: string;
  let env: Record<string, string>;
  let service: Service | undefined;
  beforeAll(async () => {
    [kube, events, dynamo] = await Promise.all([startKubeApiFake(), startEventBridgeFake({ buses: ['remediation'] }), startDynalite()]);
    table = await dynamo.createTable();
    store = createDynamoIncidentStore({ client: dynamo.client(), tableName: table });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-remote-'));
    env = {
      AWS_ENDPOINT_URL_EVENTBRIDGE: events.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: 'us-east-1',
    };
  });
  afterAll(async () => {
    await killService(service);
    await Promise.all([kube?.stop(), events?.close(), dynamo?.close()]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses local policy flags with --bus, and --bus without --table', async () => {
    const kubeconfig = kube.writeKubeconfig(path.join(dir, 'k'));
    const withState = await runCli(['watch', '--kubeconfig', kubeconfig, '--bus', 'remediation', '--table', table, '--state', 'x.sqlite'], { env });
    expect(withState.code).toBe(2);
    expect(withState.stderr).toContain("--state: not with --bus; the stack's registered cluster policy applies");
    const noTable = await runCli(['watch', '--kubeconfig', kubeconfig, '--bus', 'remediation'], { env });
    expect(noTable.code).toBe(2);
    expect(noTable.stderr).toContain('--table is required');
  });

  it('puts the request on the bus, then writes the stack’s incident back to the request as it moves', async () => {
    service = startCli(['watch', '--kubeconfig', kube.writeKubeconfig(path.join(dir, 'management')), '--bus', 'remediation', '--table', table], { env });
    await service.waitForStderr(/watching EtcdRemediationRequests; reporting to bus remediation/);
    const objects = kube.kubeConfig().makeApiClient(CustomObjectsApi);
    await objects.createNamespacedCustomObject({
      ...coordinates,
      body: {
        apiVersion: `${REQUEST_GROUP}/${REQUEST_VERSION}`,
        kind: 'EtcdRemediationRequest',
        metadata: { name: 'wl-cp-2', labels: { 'cluster.x-k8s.io/cluster-name': 'wl' } },
        spec: { reason: 'Node NotReady' },
      },
    });

    const entry = await waitFor(async () => events.calls.flatMap((c) => c.entries).find((e) => e.DetailType === 'MemberUnhealthy'), {
      timeoutMs: 15_000,
      what: 'the MemberUnhealthy on the bus',
    });
    expect(entry.EventBusName).toBe('remediation');
    expect(detailSchemas.MemberUnhealthy.parse(JSON.parse(entry.Detail!))).toMatchObject({
      clusterId: 'default/wl',
      target: { machineName: 'wl-cp-2' },
      reason: 'Node NotReady',
      source: 'mhc',
    });

    // The stack's intake opens the incident; the watcher finds it in the table.
    const { incident } = await store.openOrJoin({
      clusterId: 'default/wl',
      targetKey: 'machineName=wl-cp-2',
      target: { machineName: 'wl-cp-2' },
      reason: 'Node NotReady',
      now: Date.now(),
    });
    const read = async () =>
      ((await objects.getNamespacedCustomObject({ ...coordinates, name: 'wl-cp-2' })) as { status?: { phase?: string; incidentId?: string } }).status;
    await waitFor(async () => ((await read())?.incidentId === incident.incidentId ? true : undefined), {
      timeoutMs: 20_000,
      what: 'the incident id on the request',
    });
    // The stack decides; the watcher, reading the table, says the decision as an Event on the Machine.
    const approval = {
      kind: 'approve' as const,
      reason: 'LEADER_UNREACHABLE_PAST_GRACE' as const,
      message: 'wl-cp-2 stayed unreachable past the grace window: removal approved',
      evidence: {},
      leaderMove: 'skipped' as const,
    };
    const decided = await store.updateIncident(
      incident.incidentId,
      { lastDecision: approval },
      { expectVersion: (await store.getIncident(incident.incidentId))!.version, now: Date.now() },
    );
    const said = await waitFor(async () => kube.store.list(EVENTS, 'default', null).find((e) => e.reason === conditionReason(approval.reason)), {
      timeoutMs: 20_000,
      what: 'the approval as an Event',
    });
    expect(said).toMatchObject({
      message: approval.message,
      type: 'Normal',
      action: 'Approve',
      involvedObject: { kind: 'Machine', name: 'wl-cp-2', namespace: 'default' },
    });
    await store.closeIncident(incident.incidentId, { outcome: 'awaiting-replacement', result: {}, now: Date.now(), expectVersion: decided.version });
    const done = await waitFor(
      async () => {
        const status = await read();
        return status?.phase === 'AwaitingReplacement' ? status : undefined;
      },
      { timeoutMs: 20_000, what: 'the request to complete' },
    );
    expect(done.incidentId).toBe(incident.incidentId);
    expect(events.calls.flatMap((c) => c.entries).filter((e) => e.DetailType === 'MemberUnhealthy')).toHaveLength(1);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
