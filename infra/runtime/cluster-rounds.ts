// The periodic checks of the embedded runtime (the learner check, leader hygiene's, maintenance's): each
// cluster of the directory is checked every period its policy gives, the first time one period
// after it is first seen. One round at a time, its due clusters at once, the next round armed once
// it ends, so a check never overlaps itself; the directory is read again each round (watch's
// clusters come and go). A failure is logged and the cluster checked again a period later: never fatal.
import type { ClusterDeps } from '../../functions/app/common/index.ts';
import { checkLeaderHygiene } from '../../functions/app/hygiene/index.ts';
import { checkClusterLearners } from '../../functions/app/learners/index.ts';
import { checkMaintenance } from '../../functions/app/maintenance/index.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';

/** How long a round may wait at most, so a cluster added to the directory is found. */
const MAX_WAIT_MS = 30_000;

export interface ClusterRounds {
  start(): void;
  /** Stops arming rounds and waits for the one under way, if any. */
  stop(): Promise<void>;
}

export interface PeriodicCheck {
  /** As logs name it: "learner check". */
  what: string;
  /** The cluster's period; 0 turns its check off. */
  periodOf: (cluster: ClusterEntry) => number;
  check: (deps: ClusterDeps, cluster: ClusterEntry) => Promise<unknown>;
}

export function clusterRounds(deps: ClusterDeps, periodic: PeriodicCheck): ClusterRounds {
  const nextAt = new Map<string, number>();
  /** Each cluster's period as last read: a cluster whose entry cannot be read now waits as long. */
  const periods = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> | undefined;
  let stopped = false;

  const checkOne = async (clusterId: string, now: number): Promise<void> => {
    try {
      const cluster = await deps.directory.get(clusterId);
      const every = periodic.periodOf(cluster);
      periods.set(clusterId, every);
      if (every === 0) return void nextAt.delete(clusterId);
      const due = nextAt.get(clusterId);
      if (due === undefined) return void nextAt.set(clusterId, now + every);
      if (due > now) return;
      try {
        await periodic.check(deps, cluster);
      } finally {
        nextAt.set(clusterId, deps.clock.now() + every);
      }
    } catch (error) {
      deps.log.error(`${periodic.what} failed; tried again a period later`, { clusterId, error: String(error) });
      nextAt.set(clusterId, deps.clock.now() + (periods.get(clusterId) || MAX_WAIT_MS));
    }
  };

  const runRound = async (): Promise<void> => {
    try {
      const ids = (await deps.directory.registeredClusterIds?.()) ?? [];
      for (const gone of [...nextAt.keys()].filter((id) => !ids.includes(id))) {
        nextAt.delete(gone);
        periods.delete(gone);
      }
      const now = deps.clock.now();
      await Promise.all(ids.map((id) => checkOne(id, now)));
    } catch (error) {
      deps.log.error(`${periodic.what} round failed; tried again later`, { error: String(error) });
    }
  };

  const arm = (): void => {
    if (stopped) return;
    const soonest = Math.min(MAX_WAIT_MS, ...[...nextAt.values()].map((at) => at - deps.clock.now()));
    timer = setTimeout(
      () => {
        round = runRound().finally(() => {
          round = undefined;
          arm();
        });
      },
      Math.max(0, soonest),
    );
    timer.unref();
  };

  return {
    start() {
      stopped = false;
      // The first round only notes the clusters: each is checked one period later.
      round = runRound().finally(() => {
        round = undefined;
        arm();
      });
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}

/** Stuck learners outside any incident, every learnerCheckEveryMs (app/learners/learner-check.ts). */
export const learnerCheck: PeriodicCheck = { what: 'learner check', periodOf: (c) => c.policy.learnerCheckEveryMs, check: checkClusterLearners };

/** Leader hygiene, every hygiene.checkEveryMs of a cluster it is enabled for (app/hygiene/leader-hygiene-check.ts). */
export const hygieneCheck: PeriodicCheck = {
  what: 'leader hygiene check',
  periodOf: (c) => (c.policy.hygiene.enabled ? c.policy.hygiene.checkEveryMs : 0),
  check: checkLeaderHygiene,
};

/** Maintenance, every maintenance.checkEveryMs of a cluster it is enabled for (app/maintenance/maintain.ts): one step, the rest asked for on the bus. */
export const maintenanceCheck: PeriodicCheck = {
  what: 'maintenance check',
  periodOf: (c) => (c.policy.maintenance.enabled ? c.policy.maintenance.checkEveryMs : 0),
  check: checkMaintenance,
};
