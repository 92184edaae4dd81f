// move-leader's leader-hygiene path: a LeaderDegraded delivery makes the move its cluster's record
// keeps as asked, once. It claims the move under the record's version, looks at the cluster again
// (the leader, its term and the target must be as judged, no incident open, no pause), calls
// MoveLeader on the leader itself over each of its paths in turn, verifies that the target leads
// in a later term, and says the end (HygieneMoveEnded). A redelivery says that end again and
// moves nothing; a forged or replayed event names a move the record does not keep as asked.
import { makeEvent, type DetailOf } from '../../../events/catalogue.ts';
import { type ReasonCode, classifyFailure, boundedSaid } from '../../core/common/index.ts';
import { describeDuration, lowerFirst, type ClusterView } from '../../core/view/index.ts';
import { pauseHolding, stormHoldingChange } from '../fleet/index.ts';
import { claimOf, endMove, withMove, type EndedState, type HygieneMoveRecord, type HygieneRecord } from '../../core/hygiene/index.ts';
import { waitWithin } from '../../lib/wait-for.ts';
import type { ClusterEntry } from '../../ports/cluster-directory.ts';
import { EtcdCallError } from '../../ports/etcd.ts';
import { HygieneConflictError } from '../../ports/incident-store.ts';
import { type ClusterDeps, type Deps, iso } from '../common/index.ts';
import { probeCluster } from '../view/index.ts';

export type HygieneMoveOutcome =
  | { kind: 'unknown-cluster' | 'unknown-move' | 'claimed-elsewhere' }
  | { kind: 'ended'; state: EndedState; detail: DetailOf<'HygieneMoveEnded'>; again: boolean };

const ENDED_REASON: Record<EndedState, ReasonCode> = {
  moved: 'HYGIENE_MOVED',
  failed: 'HYGIENE_MOVE_FAILED',
  expired: 'HYGIENE_MOVE_EXPIRED',
  superseded: 'HYGIENE_SUPERSEDED',
  'would-move': 'HYGIENE_WOULD_MOVE',
};

/** Read, change, write under the version; a write by the periodic check meanwhile is read again. */
async function updateRecord(deps: Deps, clusterId: string, change: (record: HygieneRecord) => HygieneRecord | undefined): Promise<HygieneRecord | undefined> {
  for (let tries = 0; ; tries += 1) {
    const stored = await deps.store.hygieneRecord(clusterId);
    if (!stored) return undefined;
    const next = change(stored.record);
    if (!next) return undefined;
    try {
      await deps.store.saveHygieneRecord(clusterId, next, stored.version);
      return next;
    } catch (error) {
      if (!(error instanceof HygieneConflictError) || tries >= 4) throw error;
    }
  }
}

const nameIn = (view: ClusterView | undefined, id: string): string => view?.members.find((m) => m.id === id)?.name || id;

export async function moveDegradedLeader(deps: ClusterDeps, detail: DetailOf<'LeaderDegraded'>): Promise<HygieneMoveOutcome> {
  const { clusterId, moveId } = detail;
  const cluster = await deps.directory.get(clusterId).catch(() => undefined);
  if (!cluster) {
    deps.log.warn('leader hygiene: LeaderDegraded for a cluster not in the directory; nothing is moved', { clusterId, moveId });
    return { kind: 'unknown-cluster' };
  }
  const now = deps.clock.now();
  let claimed: HygieneMoveRecord | undefined;
  let outcome: HygieneMoveOutcome | undefined;
  await updateRecord(deps, clusterId, (record) => {
    const claim = claimOf(record, moveId, now, cluster.policy);
    claimed = undefined;
    if (claim.kind === 'unknown') outcome = { kind: 'unknown-move' };
    else if (claim.kind === 'claimed-elsewhere') outcome = { kind: 'claimed-elsewhere' };
    else if (claim.kind === 'ended')
      outcome = { kind: 'ended', state: claim.move.state as EndedState, detail: endedDetail(clusterId, claim.move, now), again: true };
    else if (claim.kind === 'expired')
      return endMove(record, moveId, 'expired', now, {
        message: `The move of leadership from ${claim.move.from} to ${claim.move.to} judged at ${iso(claim.move.at)} was delivered ${describeDuration(now - claim.move.at)} later, past hygiene.moveExpiryMs: its figures are stale, nothing was moved.`,
      });
    else {
      outcome = undefined;
      claimed = claim.move;
      return withMove(record, moveId, { state: 'moving', claimedAt: now });
    }
    return undefined;
  });
  if (!claimed) {
    if (outcome?.kind === 'unknown-move')
      deps.log.warn('leader hygiene: LeaderDegraded names a move the cluster record does not keep as asked; nothing is moved', { clusterId, moveId });
    if (outcome) return finish(deps, outcome);
    // Ended as expired just now.
    return end(deps, cluster, moveId, 'expired', {});
  }
  if (detail.dryRun)
    return end(deps, cluster, moveId, 'would-move', {
      message: `Dry run: ${claimed.message ?? `would move leadership from ${claimed.from} to ${claimed.to}`}. Nothing was moved.`,
    });
  return makeMove(deps, cluster, claimed);
}

async function makeMove(deps: ClusterDeps, cluster: ClusterEntry, move: HygieneMoveRecord): Promise<HygieneMoveOutcome> {
  const { policy } = cluster;
  const view = await probeCluster(deps, cluster);
  const from = nameIn(view, move.from);
  const to = nameIn(view, move.to);
  const why = await supersededBecause(deps, cluster, view, move);
  if (why) return end(deps, cluster, move.moveId, 'superseded', { message: `Leadership was not moved from ${from} to ${to}: ${why}.` });
  const { transport } = deps.etcdFor(cluster);
  const leaderPaths = view.members.find((m) => m.id === move.from)?.paths.filter((p) => p.reachability === 'ok') ?? [];
  // MoveLeader blocks until the transfer is done or aborted (one election timeout), as etcd's ReqTimeout bounds it.
  const deadlineMs = Math.max(policy.callTimeoutMs, 2 * policy.electionTimeoutMs + 1_000);
  const failures: string[] = [];
  for (const path of leaderPaths) {
    const started = performance.now();
    try {
      await transport.client({ endpoint: path.endpoint, path: path.path }).moveLeader(move.to, deadlineMs);
    } catch (error) {
      if (!(error instanceof EtcdCallError)) throw error;
      failures.push(`over ${path.path} ${path.endpoint}: ${error.failure.message || error.failure.kind}`);
      // Another path may reach the leader; an answer from etcd about the move ends it.
      if (classifyFailure(error.failure).class === 'next-path') continue;
      break;
    }
    const tookMs = Math.round(performance.now() - started);
    const after = await verifiedLeader(deps, cluster, move);
    if (after?.id === move.to) {
      return end(deps, cluster, move.moveId, 'moved', {
        message: `Moved leadership from ${from} to ${to} in ${tookMs} ms; ${to} leads in term ${after.term}${after.term === move.term + 1 ? '' : ` (judged in term ${move.term})`}: ${judgementOf(move)}.`,
        newTerm: after.term,
        tookMs,
      });
    }
    const seen = after ? `${nameIn(view, after.id)} leads in term ${after.term}` : 'no one leader was agreed on';
    return end(deps, cluster, move.moveId, 'failed', {
      message: `MoveLeader to ${to} returned after ${tookMs} ms, but ${seen}: not verified, the next check judges again.`,
      tookMs,
    });
  }
  const said = leaderPaths.length === 0 ? `no path reached ${from}` : failures.join('; ');
  return end(deps, cluster, move.moveId, 'failed', { message: `Moving leadership from ${from} to ${to} failed (${said}): the next check judges again.` });
}

/** Why the judgement no longer holds, or undefined: the leader, its term, the target, a pause or an incident changed. */
async function supersededBecause(deps: ClusterDeps, cluster: ClusterEntry, view: ClusterView, move: HygieneMoveRecord): Promise<string | undefined> {
  const { leader } = view;
  if (leader.consensus !== 'agreed') return 'the members do not agree on a leader now';
  if (leader.id !== move.from) return `${nameIn(view, leader.id!)} leads now, not ${nameIn(view, move.from)}`;
  if (leader.term !== undefined && leader.term !== move.term) return `the term is ${leader.term} now, not ${move.term} as judged`;
  const target = view.members.find((m) => m.id === move.to);
  if (!target || !target.healthy || target.isLearner) return `${nameIn(view, move.to)} is not a healthy voting member now`;
  if (!view.quorum.ok || view.quorum.healthyVoting < view.quorum.voting)
    return `not every voting member is healthy now (${view.quorum.healthyVoting} of ${view.quorum.voting})`;
  const paused = await pauseHolding(deps, cluster, view);
  if (paused) return `${paused.fleetWide ? 'the fleet' : cluster.clusterId} was paused by ${paused.mark.by} (${paused.mark.why})`;
  const storm = await stormHoldingChange(deps, cluster, view, 'nothing is moved');
  if (storm) return lowerFirst(storm);
  const open = await deps.store.listIncidents({ clusterId: cluster.clusterId, state: 'open' });
  if (open.length > 0) return `incident ${open[0]!.incidentId} opened on the cluster, and remediation owns its leadership`;
  return undefined;
}

/** Who leads once the members agree, within two election timeouts of the move; undefined when they never agreed. */
async function verifiedLeader(deps: ClusterDeps, cluster: ClusterEntry, move: HygieneMoveRecord): Promise<{ id: string; term: number } | undefined> {
  const { electionTimeoutMs } = cluster.policy;
  return waitWithin(
    async () => {
      const { leader } = await probeCluster(deps, cluster);
      return leader.consensus === 'agreed' && leader.term !== undefined && leader.term > move.term ? { id: leader.id!, term: leader.term } : undefined;
    },
    {
      timeoutMs: 2 * electionTimeoutMs + cluster.policy.callTimeoutMs,
      intervalMs: Math.max(50, Math.round(electionTimeoutMs / 10)),
      what: 'the members to agree on a leader after the move',
      clock: deps.clock,
    },
  );
}

/** The judgement's reasons: its sentence after "move leadership from A to B: ". */
const judgementOf = (move: HygieneMoveRecord): string => (move.message ?? '').replace(/^.*?leadership from \S+ to \S+(?: \([^)]*\))?: /, '');

async function end(
  deps: Deps,
  cluster: ClusterEntry,
  moveId: string,
  state: EndedState,
  facts: Partial<Pick<HygieneMoveRecord, 'message' | 'newTerm' | 'tookMs'>>,
): Promise<HygieneMoveOutcome> {
  const now = deps.clock.now();
  const record = await updateRecord(deps, cluster.clusterId, (r) => endMove(r, moveId, state, now, facts));
  const move = record?.moves.find((m) => m.moveId === moveId);
  if (!move) return { kind: 'unknown-move' };
  return finish(deps, { kind: 'ended', state, detail: endedDetail(cluster.clusterId, move, now), again: false });
}

async function finish(deps: Deps, outcome: HygieneMoveOutcome): Promise<HygieneMoveOutcome> {
  if (outcome.kind !== 'ended') return outcome;
  deps.log.info(`leader hygiene: ${outcome.detail.reason}`, {
    clusterId: outcome.detail.clusterId,
    moveId: outcome.detail.moveId,
    message: outcome.detail.message,
    again: outcome.again,
  });
  // Said again on a redelivery: the end is informational, and at least once is what the bus promises.
  const ended = makeEvent('HygieneMoveEnded', outcome.detail);
  await deps.bus.publish(ended);
  // Counted once, when the move ended: a redelivery's end is the same move said again.
  if (!outcome.again) await deps.bus.settled?.([ended]);
  return outcome;
}

function endedDetail(clusterId: string, move: HygieneMoveRecord, now: number): DetailOf<'HygieneMoveEnded'> {
  const state = move.state as EndedState;
  return boundedSaid({
    clusterId,
    moveId: move.moveId,
    at: iso(move.endedAt ?? now),
    outcome: state,
    from: move.from,
    to: move.to,
    reason: ENDED_REASON[state],
    message: move.message ?? `The move of leadership from ${move.from} to ${move.to} ended ${state}.`,
    ...(state === 'moved' ? { newLeader: move.to } : {}),
    ...(move.newTerm !== undefined ? { newTerm: move.newTerm } : {}),
    ...(move.tookMs !== undefined ? { tookMs: move.tookMs } : {}),
  });
}
