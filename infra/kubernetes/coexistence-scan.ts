// Before any request: the MachineHealthChecks that would remediate the control-plane Machines ours
// hand to etcd-remediator, in parallel and outside its lock (no template, so KCP remediates them, or
// another kind of template; ClusterClass generates such an MHC from Cluster.spec.topology). Found at
// start and on each scan, said once per finding in the log and as a Warning Event on that MHC, where
// `kubectl describe mhc` shows it. A request for those Machines is held COMPETING_REMEDIATION
// (remediation-gate.ts); the scan only says it ahead. A list the watcher may not make is said in the
// log, naming the permission, and the next scan tries again.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { competitionsOf, type Competition, type KubeObjectShape } from '../../functions/adapters/kube/cluster-api/remediation-allowed.ts';
import { CAPI_GROUP, CONTROL_PLANE_LABEL, MACHINES_PLURAL } from '../../functions/adapters/kube/cluster-api/machines.ts';
import type { EventRecorder } from '../../functions/adapters/kube/cluster-api/object-events.ts';
import { describeKubeError } from '../../functions/adapters/kube/api-errors.ts';
import { truncateNote } from '../../functions/core/kubernetes/index.ts';
import type { Log } from '../../functions/ports/log.ts';
import type { MachineApiVersion } from '../../functions/ports/kube-access.ts';

/** The Event's reason as the recorder writes it, UpperCamelCase: CompetingRemediation. */
const COMPETING_REMEDIATION_EVENT = 'COMPETING_REMEDIATION';

// Stated here, not built elsewhere: the RBAC check (test/infra/kube-calls.ts) reads each call's group and plural.
const MHCS = { group: CAPI_GROUP, plural: 'machinehealthchecks' } as const;
const MACHINES = { group: CAPI_GROUP, plural: MACHINES_PLURAL } as const;

export interface CoexistenceScanOptions {
  customObjects: CustomObjectsApi;
  recorder: EventRecorder;
  log: Log;
  version: MachineApiVersion;
  /** Between scans (default 5 min); the first runs at once. */
  everyMs?: number;
}

export interface CoexistenceScan {
  stop(): void;
}

type Listed = { items?: KubeObjectShape[] };

/** The competing MHC as the log and the Event name it. */
const rivalOf = (c: Competition): { namespace: string; name: string } => ({
  namespace: String(c.rival.metadata?.namespace),
  name: String(c.rival.metadata?.name),
});

/** A finding as it is said once: the MHC and the Machines it shares with ours. */
const findingKey = (c: Competition): string => `${rivalOf(c).namespace}/${rivalOf(c).name}:${c.machines.join(',')}`;

export function startCoexistenceScan(options: CoexistenceScanOptions): CoexistenceScan {
  const { customObjects, recorder, log, version } = options;
  const said = new Set<string>();
  const unreadable = new Set<string>();
  let stopped = false;

  async function list(plural: string, what: string, call: () => Promise<unknown>): Promise<KubeObjectShape[] | undefined> {
    try {
      const listed = (await call()) as Listed;
      unreadable.delete(plural);
      return listed.items ?? [];
    } catch (error) {
      // Once until it reads again: a scan every few minutes should not fill the log with one denial.
      if (!unreadable.has(plural)) {
        unreadable.add(plural);
        log.warn(`competing MachineHealthChecks not looked for: ${what} could not be listed`, {
          error: describeKubeError(error).split('\n')[0]!.slice(0, 300),
          needs: `list on ${plural}.${CAPI_GROUP} in every namespace (infra/kubernetes/deploy/rbac.yaml)`,
        });
      }
      return undefined;
    }
  }

  async function scan(): Promise<void> {
    const [mhcs, machines] = await Promise.all([
      list(MHCS.plural, 'the MachineHealthChecks', () => customObjects.listClusterCustomObject({ ...MHCS, version })),
      list(MACHINES.plural, 'the control-plane Machines', () =>
        customObjects.listClusterCustomObject({ ...MACHINES, version, labelSelector: CONTROL_PLANE_LABEL }),
      ),
    ]);
    if (!mhcs || !machines || stopped) return;
    const found = new Map(competitionsOf(mhcs, machines).map((c) => [findingKey(c), c]));
    for (const [key, competition] of found) {
      if (said.has(key)) continue;
      said.add(key);
      const rival = rivalOf(competition);
      log.warn('a MachineHealthCheck competes with etcd-remediator', { machineHealthCheck: `${rival.namespace}/${rival.name}`, message: competition.message });
      recorder.record(
        {
          kind: 'MachineHealthCheck',
          apiVersion: `${CAPI_GROUP}/${version}`,
          ...rival,
          ...(typeof competition.rival.metadata?.uid === 'string' ? { uid: competition.rival.metadata.uid } : {}),
        },
        { reason: COMPETING_REMEDIATION_EVENT, type: 'Warning', action: 'Scan', note: truncateNote(competition.message) },
      );
    }
    // A finding that went away (the MHC given our template, or deleted) is said again if it comes back.
    for (const key of said) if (!found.has(key)) said.delete(key);
  }

  void scan();
  const timer = setInterval(() => void scan(), options.everyMs ?? 300_000);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
