// Fleet benchmark parts B and C, on real etcd: `clusters` labs of 3 members on loopback (infra/lab),
// each leader's path cut at its fault proxy (raft between the members untouched, so its followers
// keep naming it), one report each, all at once, to ONE `run` service: the real CLI process, fed
// on stdin, its end the end of the input (run finishes what it accepted, then exits).
// B: every leader removed, time until all are done, and quorum held in each cluster: a put and a
// get every 100 ms on each live member past its proxy (test/support/quorum-checker.ts), and the
// member list sampled all along (never fewer voting members than a quorum of 3; 2 voting after).
// C: the same with the storm guard's threshold below the fleet: every report opens before any
// removal can pass the gate (the leader's loss is confirmed one election timeout after the first
// probe), so all are deferred with FLEET_STORM and nothing is removed; then they go on, after
// `resume --storm` or, with --lift cooldown, once the storm window and the cooldown have passed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openSqliteStore } from '../../functions/adapters/local/sqlite-store.ts';
import { waitFor } from '../../functions/lib/wait-for.ts';
import { startLab, type Lab } from '../../infra/lab/lab.ts';
import { killService, runCli, startCli, type Service } from '../integration/cli/support.ts';
import { startQuorumChecker, type QuorumChecker } from '../support/quorum-checker.ts';

/** etcd 3.4 refuses reconfiguration until its members have been connected this long ("unhealthy cluster"). */
const RECONFIG_GUARD_MS = 6_000;
const ALL_DONE_TIMEOUT_MS = 180_000;

export interface RealOptions {
  clusters: number;
  /** C only: the storm guard with a threshold below `clusters`. */
  storm?: { lift: 'resume' | 'cooldown' };
}

export interface RealResult {
  clusters: number;
  etcd: number;
  allDoneMs: number;
  quorumHeld: number;
  /** Leaders removed, each once. */
  removed: number;
  /** C: incidents whose removal was deferred with FLEET_STORM before any removal. */
  deferred?: number;
  /** C: clusters that lost a member while the storm held them. */
  harmed?: number;
  /** C: when the guard was lifted (resume --storm sent, or the window and cooldown over), from the reports. */
  liftedMs?: number;
  /** C: the first removal seen, from the reports: never before the lift. */
  firstRemovalMs?: number;
  /** Why a cluster's quorum or its end state was not as it should be. */
  problems: string[];
}

interface Watched {
  clusterId: string;
  lab: Lab;
  leader: string;
  checker: QuorumChecker;
  /** Fewest voting members any sample of the member list saw. */
  fewestVoting: number;
  gone: Set<string>;
  /** performance.now() when the member list first lacked the cut leader. */
  removedAt?: number;
}

/** Samples each lab's member list until stopped: who is out (the checker skips them) and the fewest voting seen. */
function sampleMembers(watched: Watched[]): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await Promise.all(
        watched.map(async (w) => {
          const list = await w.lab.memberList(1_000).catch(() => undefined);
          if (!list) return;
          const names = new Set(list.map((m) => m.name));
          for (const m of w.lab.members) if (!names.has(m.name)) w.gone.add(m.name);
          if (w.gone.has(w.leader)) w.removedAt ??= performance.now();
          w.fewestVoting = Math.min(w.fewestVoting, list.filter((m) => !m.isLearner).length);
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** C's storm: above 2 of the 10 clusters within STORM_WINDOW_MS, lifting STORM_COOLDOWN_MS after the count fell back. */
const STORM_WINDOW_MS = 20_000;
const STORM_COOLDOWN_MS = 5_000;

const policyOf = (lab: Lab, storm: RealOptions['storm']) => ({
  grace: '1s',
  electionTimeout: `${lab.electionTimeoutMs}ms`,
  callTimeout: '1s',
  backoff: { base: '300ms', cap: '2s' },
  // B: no storm and no cap below the fleet, so every removal runs at once. C: a storm above 2 of the 10.
  fleet: storm
    ? { stormShare: 0.2, stormMinClusters: 2, stormWindow: `${STORM_WINDOW_MS}ms`, stormCooldown: `${STORM_COOLDOWN_MS}ms`, maxRemovalsInFlight: 10 }
    : { stormShare: 1, stormMinClusters: 1_000, maxRemovalsInFlight: 1_000 },
});

/** The last decision of each incident in the state file, read as `status` reads it (run owns the file). */
async function lastReasons(state: string): Promise<Map<string, string | undefined>> {
  const store = openSqliteStore({ path: state, readOnly: true });
  try {
    return new Map((await store.listIncidents()).map((i) => [i.clusterId, i.lastDecision?.reason]));
  } finally {
    await store.close();
  }
}

/** The outcome line run printed for a cluster's incident, shortened. */
function outcomeOf(stdout: string, clusterId: string): string {
  for (const line of stdout.split('\n')) {
    try {
      const outcome = JSON.parse(line) as { clusterId?: string; outcome?: string; reason?: string; message?: string };
      if (outcome.clusterId === clusterId) return `${outcome.outcome} ${outcome.reason}: ${(outcome.message ?? '').slice(0, 300)}`;
    } catch {
      // Not an outcome line.
    }
  }
  return 'no outcome line';
}

export async function runReal(options: RealOptions): Promise<RealResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-real-'));
  const labs: Lab[] = [];
  let service: Service | undefined;
  const watched: Watched[] = [];
  let sampler: { stop(): Promise<void> } | undefined;
  try {
    // One at a time: 30 etcd processes booting at once on 2 cores miss their start deadline.
    for (let i = 0; i < options.clusters; i += 1) labs.push(await startLab({ members: 3, namePrefix: `f${i + 1}-etcd` }));
    const booted = performance.now();
    for (const [i, lab] of labs.entries()) {
      const leader = (await lab.leader()).name;
      await lab.fault(leader, 'cut');
      const w: Watched = { clusterId: `lab${i + 1}`, lab, leader, fewestVoting: 3, gone: new Set(), checker: undefined as unknown as QuorumChecker };
      w.checker = startQuorumChecker({
        members: () => lab.members,
        skip: (name) => w.gone.has(name) || lab.runState(name) !== 'running',
        electionTimeoutMs: lab.electionTimeoutMs,
      });
      watched.push(w);
    }
    sampler = sampleMembers(watched);
    const state = path.join(dir, 'state.sqlite');
    const config = path.join(dir, 'run.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        state,
        listen: '127.0.0.1:0',
        clusters: watched.map((w) => ({ clusterId: w.clusterId, endpoints: w.lab.endpoints(), policy: policyOf(w.lab, options.storm) })),
      }),
    );
    service = startCli(['run', '--config', config]);
    await service.waitForStderr(/listening on stdin only/, 30_000);
    await waitFor(async () => (performance.now() - booted >= RECONFIG_GUARD_MS ? true : undefined), {
      timeoutMs: RECONFIG_GUARD_MS + 1_000,
      intervalMs: 100,
      what: "etcd's reconfiguration guard to pass",
    });
    const now = new Date().toISOString();
    const reports = watched.map((w) =>
      JSON.stringify({ clusterId: w.clusterId, target: { memberName: w.leader }, reason: 'kubelet not ready', source: 'bench', observedAt: now }),
    );
    const started = performance.now();
    service.child.stdin!.end(`${reports.join('\n')}\n`);

    let deferred: number | undefined;
    let harmed: number | undefined;
    // Every opening is at or after `started`: the guard cannot lift by itself before this.
    let liftedMs: number | undefined = options.storm ? STORM_WINDOW_MS + STORM_COOLDOWN_MS : undefined;
    if (options.storm) {
      // Every incident deferred, none removed: then the storm is lifted as asked.
      const reasons = await service.until(
        async () => {
          const seen = await lastReasons(state);
          return [...seen.values()].filter((r) => r === 'FLEET_STORM').length === watched.length ? seen : undefined;
        },
        'every incident deferred with FLEET_STORM',
        60_000,
      );
      deferred = [...reasons.values()].filter((r) => r === 'FLEET_STORM').length;
      harmed = watched.filter((w) => w.gone.size > 0).length;
      if (options.storm.lift === 'resume') {
        liftedMs = performance.now() - started;
        const resumed = await runCli(['resume', '--storm', '--state', state, '--why', 'fleet benchmark: the failures are real']);
        if (resumed.code !== 0) throw new Error(`resume --storm exited ${resumed.code}: ${resumed.stderr}`);
      }
    }
    const code = await Promise.race([service.exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ALL_DONE_TIMEOUT_MS).unref())]);
    const allDoneMs = performance.now() - started;
    if (code !== 0) throw new Error(`run did not finish with 0 (${code}); stderr:\n${service.stderr().slice(-4_000)}`);
    await sampler.stop();
    sampler = undefined;

    const problems: string[] = [];
    let held = 0;
    let removed = 0;
    for (const w of watched) {
      const list = await w.lab.memberList();
      const voting = list.filter((m) => !m.isLearner).map((m) => m.name);
      const leader = await w.lab.waitForLeader({ excluding: [w.leader], timeoutMs: 10_000 }).catch(() => undefined);
      // A write and a read after: the checker's samples once the cluster settled.
      const after = await waitFor(async () => (w.checker.samples.some((s) => s.at > Date.now() - 1_000 && s.ok) ? true : undefined), {
        timeoutMs: 5_000,
        intervalMs: 100,
        what: `a write in ${w.clusterId}`,
      }).catch(() => false);
      const verdict = await w.checker.stop();
      if (!voting.includes(w.leader)) removed += 1;
      const ok =
        verdict.quorum === 'held' && w.fewestVoting >= 2 && voting.length === 2 && !voting.includes(w.leader) && leader !== undefined && after === true;
      if (ok) held += 1;
      else
        problems.push(
          `${w.clusterId}: quorum ${verdict.quorum} (${verdict.failed}/${verdict.samples} failed), fewest voting ${w.fewestVoting}, voting after ${voting.join(',')}, ` +
            `leader ${leader?.name ?? 'none'}, write after ${after === true ? 'ok' : 'none'}; run said: ${outcomeOf(service.stdout(), w.clusterId)}`,
        );
    }
    return {
      clusters: watched.length,
      etcd: labs.reduce((n, lab) => n + lab.members.length, 0),
      allDoneMs,
      quorumHeld: held,
      removed,
      ...(deferred === undefined ? {} : { deferred, harmed: harmed ?? 0 }),
      ...(liftedMs === undefined ? {} : { liftedMs, firstRemovalMs: Math.min(...watched.map((w) => (w.removedAt ?? Number.POSITIVE_INFINITY) - started)) }),
      problems,
    };
  } finally {
    await sampler?.stop();
    for (const w of watched) await w.checker.stop().catch(() => undefined);
    await killService(service);
    await Promise.all(labs.map((lab) => lab.down()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const realLine = (r: RealResult, storm?: RealOptions['storm']): string =>
  storm
    ? `fleet part=C clusters=${r.clusters} etcd=${r.etcd} deferred=${r.deferred}/${r.clusters} harmed=${r.harmed} proceeded_after=${storm.lift} lifted_ms=${Math.round(r.liftedMs ?? 0)} ` +
      `first_removal_ms=${Math.round(r.firstRemovalMs ?? 0)} removed=${r.removed}/${r.clusters} quorum_held=${r.quorumHeld}/${r.clusters} all_done_ms=${Math.round(r.allDoneMs)}`
    : `fleet part=B clusters=${r.clusters} etcd=${r.etcd} removed=${r.removed}/${r.clusters} all_done_ms=${Math.round(r.allDoneMs)} quorum_held=${r.quorumHeld}/${r.clusters}`;
