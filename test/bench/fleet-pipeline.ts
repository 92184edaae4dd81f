// Fleet benchmark part A: the pipeline alone. The real local runtime (its bus, its four handlers,
// its SQLite store in a real file, its timers) over etcd clusters held in memory that answer at
// once (test/support/doubles/instant-etcd.ts), so what is measured is our own cost per incident.
// Each cluster runs its incidents one after another (one member down at a time), the clusters all
// at once. The mix: every fifth report names a sick follower, the others a leader whose path is
// cut (followers agree on it, so the evidence is confirmed one election timeout later and, with no
// grace, it is removed without a move). The actuator stands for a replacement machine joining; an
// incident is done when the replacement check sees it (completed), and only then is the next cut.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isTerminalEvent, type EventEnvelope } from '../../events/catalogue.ts';
import { endingOfEvent } from '../../functions/core/incident/incident-endings.ts';
import { parsePolicy, type PolicyInput } from '../../functions/core/policy/policy.ts';
import { systemClock } from '../../functions/lib/system-clock.ts';
import { settlesWithin } from '../../functions/lib/with-timeout.ts';
import type { Actuator } from '../../functions/ports/actuator.ts';
import { UnknownClusterError, type ClusterDirectory } from '../../functions/ports/cluster-directory.ts';
import type { MemberInfo } from '../../functions/core/common/types.ts';
import { targetKeyOf } from '../../functions/core/view/target.ts';
import { createLocalRuntime, type LocalRuntime } from '../../infra/runtime/runtime.ts';
import { instantEtcdFleet, type InstantEtcdCluster } from '../support/doubles/instant-etcd.ts';
import { median } from '../../functions/core/common/collections.ts';

export interface PipelineOptions {
  clusters: number;
  incidentsPerCluster: number;
  /** Every n-th report names a sick follower (default 5: one in five); the others a cut leader. */
  followerEvery?: number;
  /** Where the state file goes; a fresh temp dir (removed after) by default. */
  dir?: string;
}

export interface PipelineResult {
  incidents: number;
  clusters: number;
  /** Incidents that reached an ending, by the ending's detail type. */
  endings: Record<string, number>;
  leaderCut: number;
  followerSick: number;
  elapsedMs: number;
  perMin: number;
  /** Report published → RemediationApproved (the decision to remove). */
  p50Ms: number;
  p99Ms: number;
}

/** The smallest waits the policy allows, no grace, and fleet limits that a benchmark of one machine never meets. */
export const PIPELINE_POLICY: PolicyInput = {
  graceMs: 0,
  electionTimeoutMs: 100,
  callTimeoutMs: 1_000,
  backoff: { baseMs: 100, capMs: 1_000 },
  fleet: { stormShare: 1, stormMinClusters: 100_000, maxRemovalsInFlight: 1_000 },
  // The replacement joins at once: looked for every 100 ms, so an incident completes right after.
  replacement: { checkEveryMs: 100 },
};

/** One incident past this is stuck, not slow (on a machine other work also loads): the run stops and says why. */
const INCIDENT_TIMEOUT_MS = 180_000;

export const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** The line part A prints, and the reader of it (so the test holds the two to one another). */
export const pipelineLine = (r: PipelineResult): string =>
  `fleet part=A incidents=${r.incidents} clusters=${r.clusters} leader_cut=${r.leaderCut} follower_sick=${r.followerSick} ended=${Object.values(r.endings).reduce((a, b) => a + b, 0)} ` +
  `per_min=${Math.round(r.perMin)} p50_ms=${Math.round(r.p50Ms)} p99_ms=${Math.round(r.p99Ms)} elapsed_ms=${Math.round(r.elapsedMs)}`;

export function parseFleetLine(line: string): Record<string, string> | undefined {
  if (!line.startsWith('fleet ')) return undefined;
  return Object.fromEntries(
    line
      .slice('fleet '.length)
      .split(' ')
      .map((pair) => pair.split('=', 2) as [string, string]),
  );
}

interface BenchRuntime {
  runtime: LocalRuntime;
  fleet: ReturnType<typeof instantEtcdFleet>;
  /** Resolves with the cluster's next ending; `decided` and `probed` are stamped as they happen. */
  next(clusterId: string): { ended: Promise<EventEnvelope>; times: Times };
  close(): Promise<void>;
}

interface Times {
  publishedAt: number;
  probedAt?: number;
  decidedAt?: number;
}

/** The runtime over instant etcd clusters named `names`, on a state file in `dir`. */
async function benchRuntime(dir: string, names: readonly string[]): Promise<BenchRuntime> {
  const fleet = instantEtcdFleet(systemClock);
  for (const name of names) fleet.add(name);
  const policy = parsePolicy(PIPELINE_POLICY);
  // Every member's client URL as it stands, as a directory fed by the cluster's own discovery gives them.
  const known = new Set(names);
  const directory: ClusterDirectory = {
    get: async (clusterId) => {
      if (!known.has(clusterId)) throw new UnknownClusterError(clusterId);
      return { clusterId, endpoints: fleet.get(clusterId).endpoints(), policy };
    },
  };
  // The replacement machine joins as soon as it is asked for, so the next incident finds the cluster whole.
  const actuator: Actuator = {
    name: 'instant-replacement',
    replace: async ({ clusterId }) => ({ action: 'replaced', detail: `member ${fleet.get(clusterId).join().name} joined` }),
  };
  const runtime = await createLocalRuntime({
    statePath: join(dir, 'state.sqlite'),
    directory,
    actuator,
    etcdFor: fleet.etcdFor,
    logLevel: 'SILENT',
    clock: systemClock,
  });
  const waiting = new Map<string, { times: Times; ended: (event: EventEnvelope) => void }>();
  const unsubscribe = runtime.bus.subscribe((event) => {
    const entry = waiting.get(event.detail.clusterId);
    if (!entry) return;
    if (event.detailType === 'MembersProbed') entry.times.probedAt ??= performance.now();
    if (event.detailType === 'RemediationApproved') entry.times.decidedAt ??= performance.now();
    // Done means replaced: an ending the incident goes on from (awaiting its replacement) is not the end.
    if (!isTerminalEvent(event) || endingOfEvent(event.detailType).requestGoesOn === 'until-replaced') return;
    waiting.delete(event.detail.clusterId);
    entry.ended(event);
  });
  return {
    runtime,
    fleet,
    next(clusterId) {
      const times: Times = { publishedAt: performance.now() };
      const ended = new Promise<EventEnvelope>((resolve) => waiting.set(clusterId, { times, ended: resolve }));
      return { ended, times };
    },
    async close() {
      unsubscribe();
      await runtime.stop({ drainTimeoutMs: 5_000 });
    },
  };
}

/** Cuts `sick` and reports it; resolves with the ending and the times, or throws past INCIDENT_TIMEOUT_MS. */
async function reportAndWait(bench: BenchRuntime, clusterId: string, sick: MemberInfo): Promise<{ event: EventEnvelope; times: Times }> {
  bench.fleet.get(clusterId).cut(sick.name);
  const { ended, times } = bench.next(clusterId);
  const now = new Date().toISOString();
  await bench.runtime.submit({ clusterId, target: { memberName: sick.name }, reason: 'fleet benchmark', source: 'bench', observedAt: now, at: now }, 'bench');
  if (!(await settlesWithin(INCIDENT_TIMEOUT_MS, ended))) {
    const [open] = await bench.runtime.store.listIncidents({ clusterId, state: 'open' });
    const last = open?.lastDecision;
    throw new Error(
      `${clusterId}: no ending within ${INCIDENT_TIMEOUT_MS} ms for its report of ${sick.name}; ${last ? `its last decision: ${last.reason}: ${last.message}` : 'no decision yet'}`,
    );
  }
  return { event: await ended, times };
}

const followerOf = (cluster: InstantEtcdCluster): MemberInfo | undefined => {
  const leader = cluster.leader();
  return cluster.members().find((m) => m.id !== leader?.id);
};

export async function runPipeline(options: PipelineOptions): Promise<PipelineResult> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'fleet-bench-'));
  const followerEvery = options.followerEvery ?? 5;
  const names = Array.from({ length: options.clusters }, (_, i) => `c${String(i + 1).padStart(4, '0')}`);
  const decisions: number[] = [];
  const endings: Record<string, number> = {};
  let leaderCut = 0;
  let followerSick = 0;
  const bench = await benchRuntime(dir, names);

  /** The n-th incident of the run, counted across clusters, so the mix holds at any size. */
  async function oneIncident(clusterId: string, n: number): Promise<void> {
    const cluster = bench.fleet.get(clusterId);
    const follower = n % followerEvery === followerEvery - 1 ? followerOf(cluster) : undefined;
    const sick = follower ?? cluster.leader();
    if (!sick) throw new Error(`${clusterId} has no leader to cut`);
    if (follower) followerSick += 1;
    else leaderCut += 1;
    const { event, times } = await reportAndWait(bench, clusterId, sick);
    endings[event.detailType] = (endings[event.detailType] ?? 0) + 1;
    if (times.decidedAt !== undefined) decisions.push(times.decidedAt - times.publishedAt);
  }

  const started = performance.now();
  try {
    await bench.runtime.start();
    await Promise.all(
      names.map(async (clusterId, c) => {
        for (let k = 0; k < options.incidentsPerCluster; k += 1) await oneIncident(clusterId, c * options.incidentsPerCluster + k);
      }),
    );
  } finally {
    await bench.close();
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  }
  const elapsedMs = performance.now() - started;
  const sorted = [...decisions].sort((a, b) => a - b);
  const incidents = options.clusters * options.incidentsPerCluster;
  return {
    incidents,
    clusters: options.clusters,
    endings,
    leaderCut,
    followerSick,
    elapsedMs,
    perMin: (incidents / elapsedMs) * 60_000,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
  };
}

export interface HistoryCost {
  history: number;
  reports: number;
  /** Median of report published → its first MembersProbed (open or join, match, probe), per cluster. */
  withoutMs: number;
  withMs: number;
}

/**
 * What one report costs on a cluster with no past incidents and on one with `history` of them
 * (ended two days ago, as a long-lived cluster has), side by side in one run: reports alternate
 * between the two, each a sick follower, so both see the same machine at the same moment.
 */
export async function runHistoryCost(options: { history: number; reports: number; dir?: string }): Promise<HistoryCost> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'fleet-history-'));
  const fresh = 'h-none';
  const old = 'h-long';
  const bench = await benchRuntime(dir, [fresh, old]);
  const costs: Record<string, number[]> = { [fresh]: [], [old]: [] };
  try {
    const longAgo = Date.now() - 48 * 3_600_000;
    for (let i = 0; i < options.history; i += 1) {
      const target = { memberName: `retired-${i}` };
      const { incident } = await bench.runtime.store.openOrJoin({
        clusterId: old,
        targetKey: targetKeyOf(target),
        target,
        reason: 'history',
        now: longAgo + i,
      });
      await bench.runtime.store.closeIncident(incident.incidentId, { outcome: 'blocked', result: null, now: longAgo + i + 1 });
    }
    await bench.runtime.start();
    for (let r = 0; r < options.reports; r += 1) {
      for (const clusterId of r % 2 === 0 ? [fresh, old] : [old, fresh]) {
        const sick = followerOf(bench.fleet.get(clusterId));
        if (!sick) throw new Error(`${clusterId} has no follower left`);
        const { times } = await reportAndWait(bench, clusterId, sick);
        if (times.probedAt !== undefined) costs[clusterId]!.push(times.probedAt - times.publishedAt);
      }
    }
  } finally {
    await bench.close();
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  }
  return { history: options.history, reports: options.reports, withoutMs: median(costs[fresh]!), withMs: median(costs[old]!) };
}

export const historyLine = (h: HistoryCost): string =>
  `fleet part=A-history reports=${h.reports} history=${h.history} per_report_ms_history_0=${h.withoutMs.toFixed(2)} per_report_ms_history_${h.history}=${h.withMs.toFixed(2)} ratio=${(h.withMs / h.withoutMs).toFixed(2)}`;
