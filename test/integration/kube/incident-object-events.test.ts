// run's and remediate's Events writer against the kube fake: each decision of an incident of a
// cluster reached without Cluster API on its target's Node (found in the incident's views, with the
// Node's uid), in the decisions' order; nothing for a cluster without Kubernetes access, nor for an
// incident whose member was never placed on a Node.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeEvent, type DetailOf, type EventEnvelope } from '../../../events/catalogue.ts';
import type { ClusterView } from '../../../functions/core/view/view.ts';
import type { ClusterEntry } from '../../../functions/ports/cluster-directory.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { startIncidentObjectEvents } from '../../../infra/kubernetes/incident-object-events.ts';
import { startKubeApiFake, type KubeApiFake } from '../../support/fakes/kube/api-server.ts';
import { metadataOf, resourceType } from '../../support/fakes/kube/store.ts';

const EVENTS = resourceType('', 'events')!;
const NODES = resourceType('', 'nodes')!;

let fake: KubeApiFake;
let observers: ((event: EventEnvelope) => void)[];
let incidents: Map<string, Incident>;
let said: string[];

beforeEach(async () => {
  fake = await startKubeApiFake();
  fake.addControlPlaneNode({ name: 'cp-2', internalIp: '10.0.0.12' });
  observers = [];
  incidents = new Map();
  said = [];
});
afterEach(async () => {
  await fake.stop();
});

const cluster = (clusterId: string, kube: boolean): ClusterEntry =>
  ({ clusterId, endpoints: [], policy: {}, ...(kube ? { kube: { workloadKubeconfig: fake.kubeconfigYaml() } } : {}) }) as unknown as ClusterEntry;

const start = (clusters: ClusterEntry[]) =>
  startIncidentObjectEvents({
    subscribe: (observer) => (observers.push(observer), () => undefined),
    store: { getIncident: async (id) => incidents.get(id) },
    clusters,
    say: (line) => void said.push(line),
    instance: 'test-host',
  });

/** An incident whose views place member b on `node` (none when undefined). */
function incident(incidentId: string, clusterId: string, node: string | undefined): void {
  const member = { id: 'b', name: 'cp-2', ...(node ? { host: { node, nodeExists: true } } : {}) };
  incidents.set(incidentId, {
    incidentId,
    clusterId,
    target: { memberName: 'cp-2' },
    memberId: 'b',
    views: [{ members: [member] } as unknown as ClusterView],
  } as unknown as Incident);
}

const approved = (incidentId: string, clusterId: string, reason: string) =>
  makeEvent('RemediationApproved', {
    incidentId,
    clusterId,
    attempt: 0,
    reason,
    message: `${reason} said`,
    leaderMove: 'not-needed',
  } as unknown as DetailOf<'RemediationApproved'>);

const publish = (event: EventEnvelope) => observers.forEach((observer) => observer(event));

describe('run and remediate: decisions as Events on the Node', () => {
  it('writes each decision on the Node the incident saw its member on, with its uid, in order', async () => {
    const events = start([cluster('wl', true)]);
    incident('i-1', 'wl', 'cp-2');
    publish(approved('i-1', 'wl', 'TARGET_IS_FOLLOWER'));
    publish(approved('i-1', 'wl', 'ETCD_TRANSIENT'));
    await events!.stop();
    const stored = fake.store.list(EVENTS, 'default', null);
    expect(stored.map((e) => e.reason)).toEqual(['TargetIsFollower', 'EtcdTransient']);
    expect(stored[0]!.involvedObject).toEqual({ kind: 'Node', apiVersion: 'v1', name: 'cp-2', uid: metadataOf(fake.store.get(NODES, '', 'cp-2')).uid });
    expect(stored[0]).toMatchObject({ message: 'TARGET_IS_FOLLOWER said', reportingComponent: 'etcd-remediator', reportingInstance: 'test-host' });
    expect(said).toEqual([]);
  });

  it('writes nothing for a cluster without Kubernetes access, nor for a member never placed on a Node', async () => {
    expect(start([cluster('plain', false)])).toBeUndefined();
    const events = start([cluster('wl', true), cluster('plain', false)]);
    incident('i-plain', 'plain', 'cp-2');
    incident('i-nowhere', 'wl', undefined);
    publish(approved('i-plain', 'plain', 'TARGET_IS_FOLLOWER'));
    publish(approved('i-nowhere', 'wl', 'TARGET_IS_FOLLOWER'));
    await events!.stop();
    expect(fake.store.list(EVENTS, undefined, null)).toEqual([]);
  });
});
