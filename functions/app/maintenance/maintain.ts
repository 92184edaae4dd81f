// One step of a cluster's maintenance (MaintenanceDue in; the next MaintenanceDue or
// MaintenanceEnded out): probe, plan again from what etcd shows and the run's journal
// (core/maintenance), claim the first step in the cluster's record, run it under its own deadline,
// journal it, and ask for the next. A redelivery finds the step claimed or done; a crash leaves a
// claim that lapses at the step's deadline, and the next delivery runs the step again.
//
// The lock: a step takes the cluster lock as remediation does, so a remediation and a maintenance
// never run at once. Under a NOSPACE alarm etcd refuses the lease the lock is made of; the steps
// then run without it, and only while nobody holds the lock (read without writing). Remediators
// that share a store claim each step there; others walk the members in the same order (learners,
// followers in the member list's order, the leader last), and etcd runs two defragmentations of
// one member one after the other, the second over a file already rewritten, in milliseconds.
// Compacting, disarming and the check of a write stall no member.
import { randomUUID } from 'node:crypto';
import { makeEvent, type DetailOf } from '../../../events/catalogue.ts';
import type { ReasonCode } from '../../core/common/index.ts';
import {
  claimReleased,
  claimStep,
  defragmentedMembers,
  failuresOf,
  lastStepAt,
  MAINTENANCE_ROUND_ASKER,
  maintenanceCheckDue,
  owedDefragmentation,
  MAX_STEP_FAILURES,
  RUN_ABANDONED_MS,
  maintenancePlan,
  runEnded,
  safeCompactRevision,
  stepEnded,
  stepKey,
  withRevision,
  emptyMaintenanceRecord,
  type MaintenancePlan,
  type MaintenanceRecord,
  type MaintenanceRunEnded,
  type MaintenanceStep,
  type RunStart,
} from '../../core/maintenance/index.ts';
import { describeDuration, noSpaceRaisedBy, type ClusterView } from '../../core/view/index.ts';
import { UnknownClusterError, type ClusterEntry } from '../../ports/cluster-directory.ts';
import { MaintenanceConflictError } from '../../ports/incident-store.ts';
import { type ClusterDeps, iso } from '../common/index.ts';
import { etcdClusterGuard, pauseHolding, stormHoldingChange, takeClusterLockAs, type HeldLock } from '../fleet/index.ts';
import { probeCluster } from '../view/index.ts';
import { runMaintenanceStep, type StepResult } from './maintenance-steps.ts';

export type Maintained =
  | { kind: 'unknown-cluster' }
  /** A round asked (AWS's schedule) for a cluster whose maintenance is off or whose period the round does not fall in: nothing probed. */
  | { kind: 'not-due' }
  /** Another delivery runs the step now. */
  | { kind: 'claimed-elsewhere'; key: string }
  | { kind: 'stepped'; key: string; result: StepResult }
  /** The run goes on at the next ask (an incident's next look, the next periodic check): the lock is held by another, or was lost. */
  | { kind: 'waiting'; reason: ReasonCode; message: string }
  | { kind: 'ended'; outcome: MaintenanceRunEnded['outcome']; reason: ReasonCode };

/** How long a claim holds beyond the step's own deadline: the journal write after it. */
const CLAIM_SLACK_MS = 30_000;

/** The periodic check of a cluster whose policy turns maintenance on (`run`, `watch`): a run starts when one is needed. */
export const checkMaintenance = (deps: ClusterDeps, cluster: ClusterEntry): Promise<Maintained> =>
  maintain(deps, { clusterId: cluster.clusterId, at: iso(deps.clock.now()), askedBy: 'maintenance-check' });

export async function maintain(deps: ClusterDeps, detail: DetailOf<'MaintenanceDue'>): Promise<Maintained> {
  const cluster = await deps.directory.get(detail.clusterId).catch((error: unknown) => {
    if (error instanceof UnknownClusterError) return undefined;
    throw error;
  });
  if (!cluster) {
    deps.log.info('maintenance skipped: the cluster is no longer registered', { clusterId: detail.clusterId });
    return { kind: 'unknown-cluster' };
  }
  const { enabled, checkEveryMs } = cluster.policy.maintenance;
  if (detail.askedBy === MAINTENANCE_ROUND_ASKER && !(enabled && maintenanceCheckDue(Date.parse(detail.at), checkEveryMs))) return { kind: 'not-due' };
  const view = await probeCluster(deps, cluster);
  const now = deps.clock.now();
  const stored = await deps.store.maintenanceRecord(cluster.clusterId);
  const seen = withRevision(stored?.record ?? emptyMaintenanceRecord(), newestRevision(view), now);
  // A run left for an hour is over: what it did (a week ago, say) must not stand for a new alarm.
  const record =
    seen.run && !seen.run.claim && now - lastStepAt(seen.run) > RUN_ABANDONED_MS
      ? runEnded(
          seen,
          seen.run,
          { outcome: 'waiting', endReason: 'MAINTENANCE_ABANDONED', message: 'The run took no step for an hour: ended, and planned again from the start.' },
          now,
        )
      : seen;
  const planned = maintenancePlan({
    view,
    rules: cluster.policy.maintenance,
    ...optional('compactTo', safeCompactRevision(record, now)),
    lastDefragmentedAt: record.defragmentedAt,
    ...(record.run ? { run: record.run } : {}),
    now,
  });
  const start: RunStart = record.run ?? { runId: runIdOf(cluster.clusterId, now, deps.random), reason: planned.reason, askedBy: detail.askedBy };
  const step = planned.steps[0];
  if (!step && !record.run) {
    // No run to start: only the revision seen is kept, for a later compaction. Why nothing runs
    // (off, no margin, a CORRUPT alarm) is the asker's to say: an incident's own check says it.
    await deps.store.saveMaintenanceRecord(cluster.clusterId, record, stored?.version ?? 0).catch((error: unknown) => {
      if (!(error instanceof MaintenanceConflictError)) throw error;
    });
    return { kind: 'ended', outcome: OUTCOME_OF[planned.reason] ?? 'blocked', reason: planned.reason };
  }
  const owed = owedDefragmentation(record.run);
  if (!step && owed && planned.reason !== 'MAINTENANCE_CORRUPT') {
    // Moved off for its defragmentation and not answering now (a look just after the transfer): the run waits for it.
    const message = `${owed}, whose leadership was moved off for its defragmentation, did not answer: the run goes on at the next ask.`;
    deps.log.info('maintenance waits', { clusterId: cluster.clusterId, message });
    return { kind: 'waiting', reason: 'MAINTENANCE_NO_MARGIN', message };
  }
  // An election ends in moments, and a member counted down may be slow, not gone (a loaded
  // machine, a file just rewritten): a run in flight keeps what it did and looks again at the next
  // ask. Whether a removal waits on it or blocks is its own check's to say, from its own look.
  if (
    !step &&
    (planned.reason === 'MAINTENANCE_ELECTION' || planned.reason === 'DISRUPTION_IN_PROGRESS' || (record.run && planned.reason === 'MAINTENANCE_NO_MARGIN'))
  ) {
    deps.log.info(`maintenance waits: ${planned.reason}`, { clusterId: cluster.clusterId, message: planned.message });
    return { kind: 'waiting', reason: planned.reason, message: planned.message };
  }
  if (!step) return endRun(deps, cluster, stored?.version ?? 0, record, start, planned);
  const paused = await pauseHolding(deps, cluster, view);
  if (paused)
    return {
      kind: 'waiting',
      reason: 'PAUSED',
      message: `${paused.fleetWide ? 'The fleet' : cluster.clusterId} is paused by ${paused.mark.by} (${paused.mark.why}): nothing is maintained until a person resumes it.`,
    };

  // A storm holds what would take a member down for a while; clearing a NOSPACE alarm gives the cluster its writes back, so it goes on.
  if (planned.reason !== 'MAINTENANCE_NOSPACE') {
    const storm = await stormHoldingChange(deps, cluster, view, 'nothing is defragmented');
    if (storm) return { kind: 'waiting', reason: 'FLEET_STORM', message: storm };
  }
  const key = stepKey(step);
  // One owner per delivery: a redelivery of the same step is another.
  const owner = `maintenance:${start.runId}:${randomUUID().slice(0, 8)}`;
  const claim = claimStep(record, start, key, owner, now, now + stepDeadlineMs(step, cluster) + CLAIM_SLACK_MS);
  if (!claim.claimed) return { kind: 'claimed-elsewhere', key: claim.by.key };
  let version: number;
  try {
    version = await deps.store.saveMaintenanceRecord(cluster.clusterId, claim.record, stored?.version ?? 0);
  } catch (error) {
    if (!(error instanceof MaintenanceConflictError)) throw error;
    return { kind: 'claimed-elsewhere', key };
  }

  const lock = await lockFor(deps, cluster, view, step, start.runId);
  if (!lock.ok) {
    // The run keeps what it did: the next ask goes on from there once the lock is free.
    await deps.store.saveMaintenanceRecord(cluster.clusterId, claimReleased(claim.record), version);
    deps.log.info(`maintenance waits: ${lock.reason}`, { clusterId: cluster.clusterId, runId: start.runId, message: lock.message });
    return { kind: 'waiting', reason: lock.reason, message: lock.message };
  }
  const started = deps.clock.now();
  let result: StepResult;
  let lost = false;
  try {
    result = await runMaintenanceStep(deps, cluster, view, step, defragmentedMembers(claim.record.run));
    lost = lock.held !== undefined && !(await lock.held.stillHeld().catch(() => false));
  } finally {
    await lock.held?.release();
  }
  const done = { key, at: started, tookMs: deps.clock.now() - started, outcome: result.ok ? ('done' as const) : ('failed' as const), message: result.message };
  deps.log.info(`maintenance: ${key} ${done.outcome}`, { clusterId: cluster.clusterId, runId: start.runId, message: result.message, tookMs: done.tookMs });
  const after = stepEnded(claim.record, done, step.kind === 'defragment' ? step.member : undefined);
  if (!result.ok && failuresOf(after, key) >= MAX_STEP_FAILURES)
    return endRun(deps, cluster, version, after, start, { ...planned, reason: result.reason ?? 'MAINTENANCE_STEP_FAILED', message: result.message }, 'failed');
  await deps.store.saveMaintenanceRecord(cluster.clusterId, after, version);
  if (lost) {
    const message = `The cluster lock was lost while ${key} ran (its lease lapsed, and another remediator may hold it): the run goes on at the next ask, under the lock again.`;
    deps.log.warn('maintenance waits: the cluster lock was lost', { clusterId: cluster.clusterId, runId: start.runId, key });
    return { kind: 'waiting', reason: 'LOCK_UNAVAILABLE', message };
  }
  // A failed step is tried again at the next ask, not at once: what failed it (a path, an election) needs a moment.
  if (result.ok)
    await deps.bus.publish(makeEvent('MaintenanceDue', { clusterId: cluster.clusterId, at: iso(deps.clock.now()), askedBy: `maintenance:${start.runId}` }));
  return { kind: 'stepped', key, result };
}

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } => (value === undefined ? {} : ({ [key]: value } as { [P in K]: V }));

const newestRevision = (view: ClusterView): number | undefined => {
  const seen = view.members.map((m) => m.status?.revision ?? 0).filter((r) => r > 0);
  return seen.length > 0 ? Math.max(...seen) : undefined;
};

const runIdOf = (clusterId: string, now: number, random: () => number): string =>
  `maintenance-${clusterId}-${now.toString(36)}-${Math.floor(random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0')}`.slice(0, 128);

function stepDeadlineMs(step: MaintenanceStep, cluster: ClusterEntry): number {
  const { callTimeoutMs, electionTimeoutMs } = cluster.policy;
  return step.kind === 'defragment' ? step.deadlineMs : Math.max(callTimeoutMs, 2 * electionTimeoutMs + 1_000) * 2;
}

type LockFor = { ok: true; held?: HeldLock } | { ok: false; reason: ReasonCode; message: string };

/** The cluster lock for a step; under NOSPACE (no lease can be granted) only that nobody holds it. */
async function lockFor(deps: ClusterDeps, cluster: ClusterEntry, view: ClusterView, step: MaintenanceStep, runId: string): Promise<LockFor> {
  const nospace = noSpaceRaisedBy(view).length > 0;
  // The check of a write is itself the lock taken and let go.
  if (step.kind === 'verify') return { ok: true };
  if (nospace && !cluster.policy.singleRemediator) {
    const guard = etcdClusterGuard(deps.etcdFor, cluster, view, undefined);
    const holder = await guard?.holder().catch(() => undefined);
    if (!guard || holder === undefined)
      return guard ? { ok: true } : { ok: false, reason: 'NO_SHARED_LOCK', message: 'No member could be asked who holds the cluster lock.' };
    return {
      ok: false,
      reason: 'CLUSTER_LOCKED',
      message: `${holder.owner} holds the cluster lock (for ${describeDuration(Math.max(0, deps.clock.now() - holder.since))}): maintenance waits for it to end.`,
    };
  }
  const attempt = await takeClusterLockAs(deps, cluster, `maintenance:${runId}`, view, undefined);
  if (attempt.held) return { ok: true, held: attempt.lock };
  if ('busy' in attempt) return { ok: false, reason: 'CLUSTER_LOCKED', message: `Maintenance waits: ${attempt.busy}.` };
  return {
    ok: false,
    reason: 'LOCK_UNAVAILABLE',
    message: `The cluster lock could not be taken (${attempt.where}: ${attempt.failure.message}): maintenance waits.`,
  };
}

const OUTCOME_OF: Partial<Record<ReasonCode, MaintenanceRunEnded['outcome']>> = {
  MAINTENANCE_NOT_NEEDED: 'done',
  MAINTENANCE_RATE_LIMITED: 'waiting',
  MAINTENANCE_ELECTION: 'waiting',
  DISRUPTION_IN_PROGRESS: 'waiting',
};

/** The run ends (done, waiting, blocked or failed) and says so; a record that had no run says so only when it was asked to do something. */
async function endRun(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  version: number,
  record: MaintenanceRecord,
  start: RunStart,
  planned: Pick<MaintenancePlan, 'reason' | 'message'>,
  outcome: MaintenanceRunEnded['outcome'] = OUTCOME_OF[planned.reason] ?? 'blocked',
): Promise<Maintained> {
  const now = deps.clock.now();
  const ended = runEnded(record, start, { outcome, endReason: planned.reason, message: planned.message }, now);
  try {
    await deps.store.saveMaintenanceRecord(cluster.clusterId, ended, version);
  } catch (error) {
    // Another delivery wrote the record meanwhile: its word stands.
    if (!(error instanceof MaintenanceConflictError)) throw error;
    return { kind: 'ended', outcome, reason: planned.reason };
  }
  const run = ended.lastRun!;
  const event = makeEvent('MaintenanceEnded', {
    clusterId: cluster.clusterId,
    runId: run.runId,
    at: iso(now),
    outcome,
    reason: planned.reason,
    message: planned.message,
    evidence: { askedBy: run.askedBy, startedAt: iso(run.startedAt), steps: run.done.map((d) => ({ ...d, at: iso(d.at) })) },
  });
  const said = [`maintenance ${outcome}: ${planned.reason}`, { clusterId: cluster.clusterId, message: planned.message }] as const;
  if (outcome === 'done') deps.log.info(...said);
  else deps.log.warn(...said);
  await deps.bus.publish(event);
  await deps.bus.settled?.([event]);
  return { kind: 'ended', outcome, reason: planned.reason };
}
