// `plan`: a dry run. Probes the cluster (twice, an election timeout apart, when the leader looks
// unreachable), runs the same planner as the pipeline, and says what would happen now and why.
// It sends nothing that changes the cluster.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Decision, type LeaderMove, reasonRow } from '../../functions/core/common/index.ts';
import { plan, ambiguousTarget, checkTargetFound, needsRemovalPermission, withRemovalPermission } from '../../functions/core/plan/index.ts';
import { matchedMember, clusterMismatch, credentialProblem, describeMember, healthyTargetWarning, type ClusterView } from '../../functions/core/view/index.ts';
import { defaultPolicy, type Policy } from '../../functions/core/policy/index.ts';
import { askRemovalPermission } from '../../functions/app/removal/index.ts';
import type { ClusterEntry } from '../../functions/ports/cluster-directory.ts';
import type { FleetPauses } from '../../functions/ports/fleet.ts';
import { durationFlag, parseFlags, PROGRAM } from './args.ts';
import { escapeControls } from './control-chars.ts';
import { pausesInStateFile } from './fleet-target.ts';
import { accessHelp, accessOptions, clusterAccessFromFlags, type AccessFlagValues } from './cluster-flags.ts';
import { openClusterProbe } from './cluster-probe.ts';
import { formatDuration } from './duration.ts';
import { renderRecovery } from './recovery-text.ts';
import { recoveryPlan, type RecoveryPlan } from '../../functions/core/recovery/index.ts';
import { newestSnapshot } from '../../functions/adapters/local/file-snapshots.ts';
import { EXIT, printResult, type CliResult, type TimelineEntry } from './output.ts';
import { describeView } from './progress.ts';
import { describeWanted, findTarget, targetFromFlags, targetHelp, targetOptions, type TargetFlag } from './target-flags.ts';

export const planOptions = {
  ...accessOptions,
  ...targetOptions,
  grace: { type: 'string' },
  backoff: { type: 'string' },
  'no-skip-leader-move': { type: 'boolean' },
  'allow-shrink': { type: 'boolean' },
} as const;

/** plan's own: what it reads to say how to recover a cluster that lost quorum. */
const recoveryOptions = { 'snapshot-dir': { type: 'string' } } as const;

/**
 * Interactive runs retry sooner than the service's backoff (the policy's default): the first
 * retry after --backoff, doubling up to this cap.
 */
const INTERACTIVE_BACKOFF = { baseMs: 1_000, capMs: 30_000 } as const;

export const help = `usage: etcd-remediator plan --endpoints URL[,URL…] --target NAME|ID [options]
       etcd-remediator plan --kubeconfig F [--cluster NAME] --machine NAME|--node NAME|--target NAME|ID [options]

A dry run of remediating one member: probes every member, and when the leader looks unreachable
takes a second sample at least one election timeout after the first, so the evidence rule
(followers agree on the leader at one term across samples) can confirm it. Then prints what the
pipeline would do now and why. It sends no MoveLeader and no MemberRemove. A target that answers
and is healthy on every path is said first, as a warning on stderr (and in --json's warnings):
its removal takes a working member out, which is meant only when its machine is what is sick.
The grace window starts with the first sample, as for a fresh incident.
Outcome 'planned' (exit 0) when remediation would go ahead, move leadership or wait;
'blocked' (exit 3) when it would stop; 'blocked' with CLUSTER_MISMATCH (exit 2) when the
endpoints answer with more than one etcd cluster id.

  --state FILE             a state file whose pauses the plan reads (only reads it): a paused
                           cluster's plan says PAUSED, as the pipeline's would
  --snapshot-dir DIR       where run and remediate keep snapshots (only reads it): when quorum is
                           lost, the recovery plan names the newest one kept for the cluster, its
                           size and SHA-256
${targetHelp}
  --grace DUR              how long an unreachable leader must stay so before it is removed
                           without a move (default: ${formatDuration(defaultPolicy.graceMs)})
  --backoff DUR            first retry backoff, doubling per attempt with full jitter, capped
                           at ${formatDuration(INTERACTIVE_BACKOFF.capMs)} (default: ${formatDuration(INTERACTIVE_BACKOFF.baseMs)}; etcd refuses reconfiguration for ~5s after start)
  --no-skip-leader-move    never remove a leader without moving leadership first
  --allow-shrink           remove a member even while the cluster is still short of the size
                           it had before the last removal (its replacement has not joined):
                           by default one member is down at a time, for every remediator
${accessHelp}`;

type PlanFlagValues = AccessFlagValues & { [K in 'target' | 'machine' | 'node' | 'grace' | 'backoff']?: string | undefined } & {
  [K in 'no-skip-leader-move' | 'allow-shrink']?: boolean | undefined;
};

/** Flags plan and remediate share, turned into a cluster entry and the target as its flag named it. */
export async function planInputsFromFlags(values: PlanFlagValues): Promise<{ cluster: ClusterEntry & { policy: Policy }; target: TargetFlag }> {
  const target = targetFromFlags(values);
  const baseMs = durationFlag('backoff', values.backoff) ?? INTERACTIVE_BACKOFF.baseMs;
  const cluster = await clusterAccessFromFlags(values, {
    backoff: { baseMs, capMs: Math.max(baseMs, INTERACTIVE_BACKOFF.capMs) },
    ...(values['no-skip-leader-move'] ? { allowRemoveWithoutLeaderMove: false } : {}),
    ...(values['allow-shrink'] ? { allowShrink: true } : {}),
  });
  return { cluster, target };
}

const iso = (at: number) => new Date(at).toISOString();

/** A second sample settles these; any other first decision is final. */
const wantsSecondSample = (d: Decision) => d.kind === 'retry' && reasonRow(d.reason).settledByResample === true;

/** What the removal would do about leadership; a move it would make first is `planned`: a dry run moves nothing. */
function impliedLeaderMove(d: Decision, view: ClusterView, targetId: string, policy: Policy): LeaderMove | 'planned' {
  if (d.kind === 'approve') return d.leaderMove === 'moved' ? 'planned' : d.leaderMove;
  if (d.kind === 'move-leader') return 'planned';
  const target = view.members.find((m) => m.id === targetId);
  const leads = view.leader.id === targetId || target?.status?.leaderId === targetId;
  if (!leads) return 'not-needed';
  return target?.reachable || !policy.allowRemoveWithoutLeaderMove ? 'planned' : 'skipped';
}

function nextStep(d: Decision): Record<string, unknown> {
  switch (d.kind) {
    case 'approve':
      return { kind: d.kind, next: 'remove the member now' };
    case 'move-leader':
      return { kind: d.kind, next: 'move leadership, then remove the member', candidates: d.candidates, paths: d.paths };
    case 'retry':
      return { kind: d.kind, next: 'wait and probe again', retryAt: iso(d.at), reprobeNow: d.reprobeNow };
    case 'block':
      return { kind: d.kind, next: 'stop: an operator must look' };
    case 'close':
      return { kind: d.kind, next: 'close the incident: nothing to remove' };
  }
}

/** What a plan of a cluster that lost quorum reads to say how to recover it. */
export interface RecoverySources {
  snapshotDir?: string;
  /** The certificate paths etcdctl is given in its commands: the ones this plan was given. */
  tls?: { cacert?: string; cert?: string; key?: string };
}

/** The recovery plan for a NO_QUORUM decision: from the view, and the newest snapshot kept. */
async function recoveryFor(cluster: ClusterEntry, view: ClusterView, sources: RecoverySources): Promise<RecoveryPlan> {
  const snapshot = sources.snapshotDir ? await newestSnapshot(sources.snapshotDir, cluster.clusterId) : undefined;
  return recoveryPlan({
    members: view.members,
    deployment: cluster.kube ? 'kubeadm' : 'unknown',
    ...(sources.tls ? { tls: sources.tls } : {}),
    ...(snapshot ? { snapshot } : {}),
    now: Date.now(),
  });
}

/** `pauses`: those of a state file (--state), so a plan says PAUSED where the pipeline would wait. */
export async function planNow(
  cluster: ClusterEntry & { policy: Policy },
  wanted: TargetFlag,
  pauses?: FleetPauses,
  sources: RecoverySources = {},
): Promise<CliResult> {
  const ref = wanted.value;
  const timeline: TimelineEntry[] = [];
  const prober = openClusterProbe(cluster);
  try {
    const first = await prober.probe();
    const samples = [first.view];
    timeline.push({ at: iso(first.view.at), step: 'probed', detail: describeView(first.view) });
    const match = findTarget(first.view, wanted, cluster.aliases);
    const target = matchedMember(match);
    const base = { incidentId: randomUUID(), clusterId: cluster.clusterId };
    // Before the target is looked up: endpoints of two clusters give no member list to look in.
    const mismatch = clusterMismatch(first.view);
    if (mismatch) {
      return {
        ...base,
        target: target ? { memberId: target.id, name: target.name } : { memberId: '0', name: ref },
        outcome: 'blocked',
        reason: 'CLUSTER_MISMATCH',
        message: mismatch.message,
        leaderMove: 'not-needed',
        timeline,
        evidence: { clusterIds: mismatch.ids, answeredWith: mismatch.reports, dryRun: true },
      };
    }
    if (!target) {
      const evidence = { listFailures: first.sample.listFailures };
      const found =
        match.kind === 'ambiguous'
          ? ambiguousTarget(match, describeWanted(wanted), evidence)
          : checkTargetFound(first.view, { described: describeWanted(wanted) }, evidence);
      // With no member list at all nothing is known of the target: the endpoints are what to check,
      // or the credentials, when every endpoint refused them.
      const refused = credentialProblem(first.view.listFailures);
      const said =
        found !== 'pass'
          ? found
          : refused
            ? {
                reason: refused.reason,
                message: `No endpoint of cluster ${cluster.clusterId} accepts our credentials (${refused.failures}); nothing can be planned, fix ${refused.credential}.`,
                evidence: { ...evidence, members: '' },
              }
            : {
                reason: 'CLUSTER_UNREACHABLE' as const,
                message: `No endpoint of cluster ${cluster.clusterId} answered a member list; nothing can be planned, check the endpoints.`,
                evidence: { ...evidence, members: '' },
              };
      return {
        ...base,
        // No one member matched, so no id is known: a hex-looking name is not one.
        target: { memberId: '0', name: ref },
        outcome: 'blocked',
        reason: said.reason,
        message: said.message,
        leaderMove: 'not-needed',
        timeline,
        evidence: said.evidence,
      };
    }
    const decide = () =>
      plan({
        samples,
        targetId: target.id,
        incident: { openedAt: samples[0]!.at, attempt: 0, immediateReprobes: 0 },
        remediation: { retryCount: 0 },
        policy: cluster.policy,
        now: Date.now(),
        random: Math.random,
        // One cluster and no incident history: a pause can hold it, a storm cannot be judged here.
        ...(pauses ? { fleet: { clusterId: cluster.clusterId, facts: { pauses, opened: [], registeredClusters: 1 } } } : {}),
      });
    let decision = decide();
    if (wantsSecondSample(decision)) {
      timeline.push({
        at: iso(Date.now()),
        step: 'second-sample',
        detail: `${decision.reason}: sampling again one election timeout (${cluster.policy.electionTimeoutMs}ms) after the first`,
      });
      // A timer may fire a millisecond before the wall clock reads its end (Node rounds timers to
      // whole milliseconds on a monotonic clock): the second sample must be a full election timeout
      // after the first by the clock the evidence rule reads, or it proves nothing.
      const apart = first.view.at + cluster.policy.electionTimeoutMs;
      while (Date.now() < apart) await sleep(Math.max(1, apart - Date.now()));
      const second = await prober.probe(first.view);
      samples.push(second.view);
      timeline.push({ at: iso(second.view.at), step: 'probed', detail: describeView(second.view) });
      decision = decide();
    }
    const current = samples.at(-1)!;
    // As move-leader asks before any move: would etcd let us remove the member at all?
    if (needsRemovalPermission(decision)) {
      const answer = await askRemovalPermission(await prober.transport(), current, target.id, cluster.policy.callTimeoutMs);
      decision = withRemovalPermission(decision, answer, { who: describeMember(target), user: cluster.auth?.username });
    }
    timeline.push({ at: iso(Date.now()), step: `plan:${decision.kind}`, detail: `${decision.reason}: ${decision.message}` });
    const healthy = healthyTargetWarning(current, target.id);
    return {
      ...base,
      ...(healthy ? { warnings: [healthy] } : {}),
      target: { memberId: target.id, name: target.name },
      outcome: decision.kind === 'block' ? 'blocked' : decision.kind === 'close' ? 'closed' : 'planned',
      reason: decision.reason,
      message: decision.message,
      leaderMove: impliedLeaderMove(decision, current, target.id, cluster.policy),
      timeline,
      evidence: {
        ...decision.evidence,
        decision: nextStep(decision),
        samples: samples.length,
        dryRun: true,
        ...(decision.reason === 'NO_QUORUM' ? { recovery: await recoveryFor(cluster, current, sources) } : {}),
      },
    };
  } finally {
    await prober.close();
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseFlags('plan', argv, { ...planOptions, ...recoveryOptions, state: { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return EXIT.ok;
  }
  const { cluster, target } = await planInputsFromFlags(values);
  const pauses = values.state === undefined ? undefined : await pausesInStateFile(values.state);
  const snapshotDir = values['snapshot-dir'];
  const tls = {
    ...(values.cacert ? { cacert: values.cacert } : {}),
    ...(values.cert ? { cert: values.cert } : {}),
    ...(values.key ? { key: values.key } : {}),
  };
  const result = await planNow(cluster, target, pauses, { ...(snapshotDir ? { snapshotDir } : {}), tls });
  // Said first and loudly, where a person reads what went wrong: a typo of a name plans a healthy member's removal.
  for (const warning of result.warnings ?? []) process.stderr.write(`${PROGRAM}: warning: ${escapeControls(warning)}\n`);
  const code = printResult(result, values.json ?? false);
  const recovery = result.evidence.recovery as RecoveryPlan | undefined;
  if (recovery && !values.json) process.stdout.write(`${renderRecovery(recovery)}\n`);
  return code;
}
