// Each decision of `run` and `remediate` as a Kubernetes Event on the object it concerns, for the
// clusters reached through Kubernetes: the target member's Node (namespace default, where a
// cluster-scoped object's Events go), or with Cluster API its Machine, as `watch` writes them. The
// same decisions as the watcher's (kubeEventOf), through the same recorder: in the background,
// never holding up nor failing a remediation; a write refused (RBAC, say) is said once.
import os from 'node:os';
import { CoreV1Api } from '@kubernetes/client-node';
import type { EventEnvelope } from '../../events/catalogue.ts';
import { createEventRecorder, type EventRecorder } from '../../functions/adapters/kube/cluster-api/object-events.ts';
import { CAPI_GROUP, resolveMachineApi } from '../../functions/adapters/kube/cluster-api/machines.ts';
import { machineApiOf } from '../../functions/adapters/kube/cluster-api/machine-api-version.ts';
import { kubeConfigFrom } from '../../functions/adapters/kube/kube-config.ts';
import { readNodeReference } from '../../functions/adapters/kube/node-reference.ts';
import { setNewest } from '../../functions/core/common/index.ts';
import { machineSeen, nodeSeen, type InvolvedObject } from '../../functions/core/kubernetes/index.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';
import type { Incident } from '../../functions/ports/incident-store.ts';
import type { Log } from '../../functions/ports/log.ts';
import { kubeEventOf } from './decision-events.ts';

export interface IncidentObjectEventsOptions {
  subscribe: (observer: (event: EventEnvelope) => void) => () => void;
  store: { getIncident(incidentId: string): Promise<Incident | undefined> };
  clusters: readonly ClusterEntry[];
  /** Where the one line about Events not written goes (stderr). */
  say: (line: string) => void;
  /** reportingInstance: who wrote the Events (default: this host). */
  instance?: string;
}

export interface IncidentObjectEvents {
  /** Waits a few seconds at most for the Events of the last decisions. */
  stop(): Promise<void>;
}

interface ClusterEvents {
  recorder: EventRecorder;
  objectOf(incident: Incident): Promise<InvolvedObject | undefined>;
}

/** The recorder's warnings, said once: a kubeconfig without the right would say it at every decision. */
function onceLog(say: (line: string) => void): Log {
  let said = false;
  const quiet = (): void => undefined;
  return {
    debug: quiet,
    info: quiet,
    error: quiet,
    warn(message, ...extra) {
      if (said) return;
      said = true;
      const { object, error } = Object.assign({}, ...extra) as { object?: string; error?: string };
      say(`${message} (${object ?? 'an object'}: ${error ?? 'unknown error'}); further Events that fail are not said again`);
    },
  };
}

function clusterEvents(kube: NonNullable<ClusterEntry['kube']>, log: Log, instance: string): ClusterEvents {
  const management = kube.management;
  const config = kubeConfigFrom(management?.kubeconfig ?? kube.workloadKubeconfig);
  const core = config.makeApiClient(CoreV1Api);
  const recorder = createEventRecorder({ core, log, clock: { now: () => Date.now() }, instance });
  if (management) {
    // The version the Machine is served in, as its readers found it (discovery, unless the access names one).
    const version = machineApiOf(management, config);
    return {
      recorder,
      objectOf: async (incident) => {
        const machine = machineSeen(incident.views, { target: incident.target, ...(incident.memberId ? { memberId: incident.memberId } : {}) });
        if (!machine) return undefined;
        const apiVersion = `${CAPI_GROUP}/${await resolveMachineApi(version)}`;
        return { kind: 'Machine', apiVersion, namespace: management.namespace, name: machine.name, uid: machine.uid };
      },
    };
  }
  return {
    recorder,
    // Read once per incident (the caller keeps it): a Node made again under the name has another uid.
    objectOf: async (incident) => {
      const node = nodeSeen(incident.views, { target: incident.target, ...(incident.memberId ? { memberId: incident.memberId } : {}) });
      return node === undefined ? undefined : readNodeReference(core, node);
    },
  };
}

/** undefined when no cluster is reached through Kubernetes. */
export function startIncidentObjectEvents(options: IncidentObjectEventsOptions): IncidentObjectEvents | undefined {
  const log = onceLog(options.say);
  const instance = (options.instance ?? os.hostname()).slice(0, 128);
  const byCluster = new Map(options.clusters.flatMap((c) => (c.kube ? [[c.clusterId, clusterEvents(c.kube, log, instance)] as const] : [])));
  if (byCluster.size === 0) return undefined;
  /** Each incident's object, once found (an incident concerns one member). */
  const objects = new Map<string, InvolvedObject>();
  // One after the other, so the Events keep the decisions' order.
  let queue: Promise<void> = Promise.resolve();

  async function tell(events: ClusterEvents, incidentId: string, event: EventEnvelope): Promise<void> {
    const said = kubeEventOf(event);
    if (!said) return;
    let object = objects.get(incidentId);
    if (!object) {
      const incident = await options.store.getIncident(incidentId);
      object = incident && (await events.objectOf(incident));
      if (!object) return;
      // A long-running `run` keeps those of the latest incidents only.
      setNewest(objects, incidentId, object, 1_024);
    }
    events.recorder.record(object, said);
  }

  const unsubscribe = options.subscribe((event) => {
    const { clusterId, incidentId } = event.detail as { clusterId?: string; incidentId?: string };
    const events = clusterId === undefined ? undefined : byCluster.get(clusterId);
    if (!events || !incidentId) return;
    queue = queue.then(() => tell(events, incidentId, event)).catch(() => undefined);
  });

  return {
    async stop() {
      unsubscribe();
      const within = new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref());
      await Promise.race([queue, within]);
      await Promise.all([...byCluster.values()].map((c) => c.recorder.flush(5_000)));
    },
  };
}
