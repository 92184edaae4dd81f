// Carries out a move-leader decision: tries each path to the leader and each ranked candidate,
// as the pure nextMoveStep says, until it reaches a decision.
import type { Decision } from '../../core/common/index.ts';
import { nextMoveStep, type MoveAttempt, type MoveLeaderDecision } from '../../core/move/index.ts';
import { waitsInARowAfter, unreachableBackoffsAfter } from '../../core/waits/index.ts';
import type { ClusterView } from '../../core/view/index.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import { EtcdCallError } from '../../ports/etcd.ts';
import type { Incident } from '../../ports/incident-store.ts';
import { type ClusterDeps, attemptsSpent } from '../common/index.ts';
import { probeCluster } from '../view/index.ts';

export interface MoveRun {
  decision: Decision;
  attempts: MoveAttempt[];
  /** The view taken to verify the move, when one was taken. */
  verifyView?: ClusterView;
  /** How long the successful MoveLeader call took. */
  tookMs?: number;
}

export async function runMove(deps: ClusterDeps, cluster: ClusterEntry, incident: Incident, view: ClusterView, decision: MoveLeaderDecision): Promise<MoveRun> {
  const { policy } = cluster;
  const { transport } = deps.etcdFor(cluster);
  const leaderPaths = view.members.find((m) => m.id === decision.leaderId)?.paths ?? [];
  const attempts: MoveAttempt[] = [];
  const run: MoveRun = { decision, attempts };
  let verifiedLeaderId: string | undefined;
  // Each step either calls etcd once or decides, and there are at most paths × candidates calls.
  for (;;) {
    const step = nextMoveStep(decision, attempts, {
      policy,
      now: deps.clock.now(),
      random: deps.random,
      attempt: attemptsSpent(incident),
      immediateReprobes: incident.immediateReprobes,
      openedAt: incident.openedAt,
      waitsInARow: waitsInARowAfter(incident.lastDecision),
      unreachableBackoffs: unreachableBackoffsAfter(incident.lastDecision),
      ...(verifiedLeaderId !== undefined ? { verifiedLeaderId } : {}),
    });
    if (step.kind === 'verify') {
      run.verifyView = await probeCluster(deps, cluster, view);
      verifiedLeaderId = run.verifyView.leader.consensus === 'agreed' ? run.verifyView.leader.id! : '0';
      continue;
    }
    if (step.kind !== 'try') return { ...run, decision: step };
    const endpoint = leaderPaths.find((p) => p.path === step.path)?.endpoint ?? '';
    const at = deps.clock.now();
    const started = performance.now();
    try {
      await transport.client({ endpoint, path: step.path }).moveLeader(step.candidateId, policy.callTimeoutMs);
      run.tookMs = performance.now() - started;
      attempts.push({ path: step.path, endpoint, candidateId: step.candidateId, at, outcome: 'moved' });
    } catch (error) {
      if (!(error instanceof EtcdCallError)) throw error;
      attempts.push({ path: step.path, endpoint, candidateId: step.candidateId, at, outcome: error.failure });
    }
  }
}
