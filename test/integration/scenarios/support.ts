// Shared helpers for the lab scenarios: the etcd adapter and the pure core wired together by hand,
// the way the handlers will, but with every step visible to the test.
import { afterEach } from 'vitest';
import { createEtcd3Transport, createProber, directPaths } from '../../../functions/adapters/etcd/index.ts';
import { classifyFailure } from '../../../functions/core/classify.ts';
import { rankMoveCandidates } from '../../../functions/core/candidates.ts';
import type { Decision } from '../../../functions/core/decision.ts';
import { nextMoveStep, type MoveAttempt, type MoveLeaderDecision } from '../../../functions/core/move-steps.ts';
import { plan } from '../../../functions/core/plan.ts';
import { parsePolicy, type Policy } from '../../../functions/core/policy.ts';
import { NO_LEADER, type MemberId, type MemberInfo } from '../../../functions/core/types.ts';
import { buildClusterView, type ClusterView } from '../../../functions/core/view.ts';
import { EtcdCallError, type EtcdTransport, type Prober } from '../../../functions/ports/etcd.ts';
import { startLab, type Lab, type LabMemberInfo } from '../../../infra/lab/lab.ts';
import { WaitAborted, waitFor } from '../../../functions/shared/wait-for.ts';

/** The lab's election timeout, a short call deadline and a short grace window keep scenarios fast. */
export const scenarioPolicy: Policy = parsePolicy({
  electionTimeoutMs: 500,
  callTimeoutMs: 1_000,
  graceMs: 1_500,
  pathOrder: ['direct'],
  backoff: { baseMs: 200, capMs: 1_000 },
});

export interface Probing {
  transport: EtcdTransport;
  prober: Prober;
}

export function openProbing(): Probing {
  const transport = createEtcd3Transport();
  return { transport, prober: createProber(transport, directPaths) };
}

export interface Scenario extends Probing {
  lab: Lab;
  /** Runs first at teardown, e.g. SIGCONT for a stopped member. */
  onTeardown(cleanup: () => void | Promise<void>): void;
}

/**
 * Registers teardown in the calling describe and returns a starter: each test gets its own lab
 * and transport, and both are closed after it whatever happened.
 */
export function labPerTest(): (members: number) => Promise<Scenario> {
  let current: { lab?: Lab; probing?: Probing; cleanups: (() => void | Promise<void>)[] } | undefined;
  afterEach(async () => {
    const open = current;
    current = undefined;
    if (!open) return;
    try {
      for (const cleanup of open.cleanups.reverse()) await cleanup();
    } finally {
      try {
        await open.probing?.transport.close();
      } finally {
        await open.lab?.down();
      }
    }
  });
  return async (members) => {
    const open: NonNullable<typeof current> = { cleanups: [] };
    current = open;
    open.lab = await startLab({ members, electionTimeoutMs: scenarioPolicy.electionTimeoutMs });
    open.probing = openProbing();
    return { lab: open.lab, ...open.probing, onTeardown: (cleanup) => void open.cleanups.push(cleanup) };
  };
}

/** One probe seeded with every endpoint the lab advertises (its fault proxies). */
export async function probeView(prober: Prober, lab: Lab, policy: Policy = scenarioPolicy, deadlineMs = policy.callTimeoutMs): Promise<ClusterView> {
  const sample = await prober.probe({ seeds: lab.endpoints(), deadlineMs, paths: policy.pathOrder });
  return buildClusterView(sample);
}

/** plan() for a fresh incident: first attempt, no remediation history. */
export function planFor(samples: ClusterView[], targetId: MemberId, policy: Policy = scenarioPolicy, now = Date.now()): Decision {
  return plan({
    samples,
    targetId,
    incident: { openedAt: samples[0]?.at ?? now, attempt: 0, immediateReprobes: 0 },
    remediation: { retryCount: 0 },
    policy,
    now,
    random: () => 0.5,
  });
}

/** One probe and what plan() made of every probe so far. */
export interface Observation {
  view: ClusterView;
  decision: Decision;
  /** The `now` plan() was given. */
  now: number;
}

/** Keeps every view of one incident, oldest first, and plans on all of them, as a handler would. */
export class Observer {
  readonly observations: Observation[] = [];
  private readonly prober: Prober;
  private readonly lab: Lab;
  private readonly targetId: MemberId;
  private readonly policy: Policy;

  constructor(options: { prober: Prober; lab: Lab; targetId: MemberId; policy?: Policy }) {
    this.prober = options.prober;
    this.lab = options.lab;
    this.targetId = options.targetId;
    this.policy = options.policy ?? scenarioPolicy;
  }

  get samples(): ClusterView[] {
    return this.observations.map((o) => o.view);
  }

  /** Probes once more and plans on every sample so far. */
  async observe(deadlineMs = this.policy.callTimeoutMs): Promise<Observation> {
    const view = await probeView(this.prober, this.lab, this.policy, deadlineMs);
    const now = Date.now();
    const samples = [...this.samples, view];
    const observation = { view, decision: planFor(samples, this.targetId, this.policy, now), now };
    this.observations.push(observation);
    return observation;
  }

  /** Observes until `done` accepts a decision, or the deadline passes. */
  observeUntil(done: (d: Decision) => boolean, what: string, options: { timeoutMs?: number; deadlineMs?: number; intervalMs?: number } = {}): Promise<Observation> {
    return waitFor(
      async () => {
        const o = await this.observe(options.deadlineMs);
        if (done(o.decision)) return o;
        throw new Error(`last decision ${o.decision.kind} ${o.decision.reason}: ${o.decision.message}`);
      },
      { timeoutMs: options.timeoutMs ?? 15_000, intervalMs: options.intervalMs ?? 100, what },
    );
  }
}

export interface MoveRun {
  decision: Decision;
  attempts: MoveAttempt[];
  verifyView?: ClusterView;
}

/** Carries out a move-leader decision with nextMoveStep over the real transport; verify re-probes. */
export async function driveMove(probing: Probing, lab: Lab, view: ClusterView, decision: MoveLeaderDecision, policy: Policy = scenarioPolicy): Promise<MoveRun> {
  const leaderPaths = view.members.find((m) => m.id === decision.leaderId)?.paths ?? [];
  const run: MoveRun = { decision, attempts: [] };
  let verifiedLeaderId: MemberId | undefined;
  // At most paths × candidates calls plus one verify: bounded, but guard against a broken driver.
  for (let step = 0; step < 32; step++) {
    const next = nextMoveStep(decision, run.attempts, {
      policy,
      now: Date.now(),
      random: () => 0.5,
      attempt: 0,
      immediateReprobes: 0,
      ...(verifiedLeaderId === undefined ? {} : { verifiedLeaderId }),
    });
    if (next.kind === 'verify') {
      run.verifyView = await probeView(probing.prober, lab, policy);
      const { leader } = run.verifyView;
      verifiedLeaderId = leader.consensus === 'agreed' ? leader.id! : NO_LEADER;
      continue;
    }
    if (next.kind !== 'try') return { ...run, decision: next };
    const endpoint = leaderPaths.find((p) => p.path === next.path)?.endpoint ?? '';
    const at = Date.now();
    try {
      await probing.transport.client({ endpoint, path: next.path }).moveLeader(next.candidateId, policy.callTimeoutMs);
      run.attempts.push({ path: next.path, endpoint, candidateId: next.candidateId, at, outcome: 'moved' });
    } catch (error) {
      if (!(error instanceof EtcdCallError)) throw error;
      run.attempts.push({ path: next.path, endpoint, candidateId: next.candidateId, at, outcome: error.failure });
    }
  }
  throw new Error('the move driver did not reach a decision in 32 steps');
}

/**
 * MemberRemove through the best healthy non-target member of `view`. etcd refuses reconfiguration
 * ("unhealthy cluster") until its peers have been connected for a while and until it has noticed a
 * dead peer; the core classes that as a back-off, which here is a retry within the deadline.
 */
export async function removeMember(probing: Probing, view: ClusterView, targetId: MemberId, policy: Policy = scenarioPolicy, timeoutMs = 15_000): Promise<{ via: string; members: MemberInfo[] }> {
  const via = rankMoveCandidates(view, targetId)[0];
  if (!via) throw new Error(`no healthy member to remove ${targetId} through`);
  const endpoint = via.paths.find((p) => p.reachability === 'ok')?.endpoint;
  if (!endpoint) throw new Error(`${via.name} answered on no path`);
  const client = probing.transport.client({ endpoint, path: 'direct' });
  return waitFor(
    async () => {
      try {
        return { via: via.name, members: await client.memberRemove(targetId, policy.callTimeoutMs) };
      } catch (error) {
        if (error instanceof EtcdCallError && classifyFailure(error.failure).class === 'back-off') throw error;
        throw new WaitAborted(`member remove ${targetId} via ${via.name} failed: ${(error as Error).message}`, { cause: error });
      }
    },
    { timeoutMs, intervalMs: 250, what: `member remove ${targetId} via ${via.name}` },
  );
}

/** Waits until the lab's ground-truth member list no longer has `id`. */
export async function waitUntilGone(lab: Lab, id: MemberId, timeoutMs = 10_000): Promise<LabMemberInfo[]> {
  return waitFor(
    async () => {
      const list = await lab.memberList();
      if (list.some((m) => m.id === id)) throw new Error(`${id} is still listed`);
      return list;
    },
    { timeoutMs, what: `member ${id} to leave the member list` },
  );
}
