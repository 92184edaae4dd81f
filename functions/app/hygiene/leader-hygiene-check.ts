// The periodic leader-hygiene check of one cluster: probe it for its voting members, scrape each
// one's /metrics and Status, add the interval's samples to the cluster's hygiene record, and judge
// the leader (core/hygiene/leader-hygiene.ts). A judgement to move is recorded as an asked move before
// LeaderDegraded goes out, so only that delivery can make it (hygiene-move.ts); a hold that needs a
// person is said once when it starts and once when it ends (LeaderHygieneAlert, core
// hygiene-alert.ts decides). A member that cannot be read is unknown to the judgement, not a
// reason to judge nothing. A pause, or an incident open on the cluster, turns a move into a hold:
// remediation owns the leadership then.
import { makeEvent, type DetailOf, type EventEnvelope } from '../../../events/catalogue.ts';
import {
  alertSayings,
  withScrapes,
  hygieneCheckDue,
  openMoveOf,
  staleMovesEnded,
  emptyHygieneRecord,
  type HygieneMoveRecord,
  type HygieneRecord,
  type MemberScrape,
  judgeLeaderHygiene,
  type HygieneDecision,
  heldBack,
  wouldMove,
  type HygieneVerdict,
} from '../../core/hygiene/index.ts';
import { pauseHolding, stormHoldingChange } from '../fleet/index.ts';
import type { ClusterView } from '../../core/view/index.ts';
import { boundedSaid, type MemberInfo } from '../../core/common/index.ts';
import { UnknownClusterError, type ClusterEntry } from '../../ports/cluster-directory.ts';
import { HygieneConflictError } from '../../ports/incident-store.ts';
import { scrapeEvery, probeCluster } from '../view/index.ts';
import { type ClusterDeps, iso } from '../common/index.ts';

export type { HygieneVerdict };

export type HygieneCheck =
  | { kind: 'off' | 'not-due' | 'unknown-cluster' }
  /** Another check or a move's delivery wrote the record meanwhile: this check's samples are dropped, the next one's count. */
  | { kind: 'conflict' }
  | { kind: 'judged'; verdict: HygieneVerdict; moveId?: string; published: EventEnvelope[] };

/** Moves that cost (or, in a dry run, would have cost) a transfer: those the cooldown and the day's limit count. */
const countedMoves = (moves: readonly HygieneMoveRecord[]) => moves.filter((m) => m.state !== 'expired' && m.state !== 'superseded');

const moveIdOf = (clusterId: string, now: number, random: () => number): string =>
  `hygiene-${clusterId}-${now.toString(36)}-${Math.floor(random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0')}`.slice(0, 128);

export async function checkLeaderHygiene(deps: ClusterDeps, cluster: ClusterEntry): Promise<HygieneCheck> {
  const { policy, clusterId } = cluster;
  if (!policy.hygiene.enabled) return { kind: 'off' };
  const view = await probeCluster(deps, cluster);
  const voters: MemberInfo[] = view.members.filter((m) => !m.isLearner && m.started);
  const metrics = deps.etcdFor(cluster).metrics;
  const stored = await deps.store.hygieneRecord(clusterId);
  const before = stored?.record ?? emptyHygieneRecord();
  const now = deps.clock.now();
  // A move never delivered past its expiry, or whose delivery died mid-move, ends here: it must not hold every later check.
  let record = staleMovesEnded(before, now, policy);
  let verdict: HygieneVerdict;
  if (!metrics) {
    verdict = {
      kind: 'not-evaluated',
      reason: 'HYGIENE_NO_METRICS',
      message: `${clusterId}'s etcd access cannot read the members' /metrics: the leader is not judged.`,
      evidence: {},
    };
  } else {
    const outcomes = await scrapeEvery(metrics, voters, policy.callTimeoutMs);
    const scrapes: MemberScrape[] = outcomes.flatMap((o) => ('scrape' in o ? [o.scrape] : []));
    record = withScrapes(
      record,
      scrapes,
      voters.map((m) => m.id),
      now,
      policy.hygiene,
    );
    // A member that could not be read (or whose text was refused) is unknown to the judgement: no target, never a figure.
    const failed = new Map(outcomes.flatMap((o) => ('error' in o ? [[o.member.id, o.error.message] as const] : [])));
    verdict = judgeLeaderHygiene({
      members: voters.map((m) => ({
        id: m.id,
        name: m.name,
        samples: record.samples[m.id] ?? [],
        ...(failed.has(m.id) ? { scrapeFailed: failed.get(m.id)! } : {}),
      })),
      moves: countedMoves(record.moves),
      now,
      policy,
    });
  }
  verdict = await heldBackBy(deps, cluster, view, record, verdict);
  const published: EventEnvelope[] = [];
  let moveId: string | undefined;
  const pending = openMoveOf(record);
  if (verdict.reason === 'HYGIENE_MOVE_PENDING' && pending?.state === 'asked') {
    // Asked, and maybe never delivered (the publish after the write failed): asked again, the record claims it once.
    published.push(makeEvent('LeaderDegraded', degradedDetail(clusterId, pending, policy.dryRun || policy.hygiene.dryRun)));
  }
  if (verdict.kind === 'move' || verdict.kind === 'would-move') {
    moveId = moveIdOf(clusterId, now, deps.random);
    const leaderTerm = record.samples[verdict.from]?.at(-1)?.raftTerm ?? view.leader.term ?? 1;
    const move: HygieneMoveRecord = { moveId, at: now, from: verdict.from, to: verdict.to, state: 'asked', term: leaderTerm, message: verdict.message };
    record = { ...record, moves: [...record.moves, move] };
    published.push(makeEvent('LeaderDegraded', degradedDetail(clusterId, move, verdict.kind === 'would-move', verdict.evidence)));
  }
  const { say, held } = alertSayings(record.lastAlert, verdict, now);
  for (const saying of say) published.push(makeEvent('LeaderHygieneAlert', boundedSaid({ clusterId, at: iso(now), ...saying })));
  record = { ...record, lastJudged: { at: now, kind: verdict.kind, reason: verdict.reason, message: verdict.message }, lastAlert: held };
  try {
    await deps.store.saveHygieneRecord(clusterId, record, stored?.version ?? 0);
  } catch (error) {
    if (!(error instanceof HygieneConflictError)) throw error;
    deps.log.info('leader hygiene: the record was written meanwhile; this check is dropped', { clusterId });
    return { kind: 'conflict' };
  }
  // The decision and the figures behind it, every check: what a person reads to trust a move. A
  // hold already said is news to no one: its checks go to debug, its start and end are said.
  const judged = [`leader hygiene: ${verdict.reason}`, { clusterId, kind: verdict.kind, message: verdict.message, evidence: verdict.evidence }] as const;
  if (verdict.kind === 'hold' && verdict.alert && say.length === 0) deps.log.debug(...judged);
  else deps.log.info(...judged);
  for (const saying of say) {
    const fields = { clusterId, message: saying.message, evidence: saying.evidence };
    if (saying.phase === 'started') deps.log.warn(`leader hygiene alert: ${saying.reason}`, fields);
    else deps.log.info(`leader hygiene alert ended: ${saying.reason}`, fields);
  }
  if (published.length > 0) await deps.bus.publish(...published);
  // An alert's start and end are each said once (the record keeps the hold, written above), so
  // counted once; a move asked is counted by its end (HygieneMoveEnded), not here, where it may be
  // asked again.
  const said = published.filter((e) => e.detailType === 'LeaderHygieneAlert');
  if (said.length > 0) await deps.bus.settled?.(said);
  return { kind: 'judged', verdict, ...(moveId ? { moveId } : {}), published };
}

function degradedDetail(clusterId: string, move: HygieneMoveRecord, dryRun: boolean, evidence: Record<string, unknown> = {}): DetailOf<'LeaderDegraded'> {
  return boundedSaid({
    clusterId,
    moveId: move.moveId,
    at: iso(move.at),
    from: move.from,
    to: move.to,
    term: move.term,
    dryRun,
    reason: 'LEADER_DEGRADED' as const,
    message: move.message ?? `move leadership from ${move.from} to ${move.to}`,
    evidence,
  });
}

/** What holds a move back whatever the figures: a move under way, a pause, an incident open on the cluster. */
async function heldBackBy(
  deps: ClusterDeps,
  cluster: ClusterEntry,
  view: ClusterView,
  record: HygieneRecord,
  verdict: HygieneDecision,
): Promise<HygieneVerdict> {
  const pending = openMoveOf(record);
  if (pending || !wouldMove(verdict)) return heldBack(verdict, { clusterId: cluster.clusterId, pending });
  const paused = await pauseHolding(deps, cluster, view);
  const storm = paused ? undefined : await stormHoldingChange(deps, cluster, view, 'nothing is moved');
  const open = paused || storm ? [] : await deps.store.listIncidents({ clusterId: cluster.clusterId, state: 'open' });
  return heldBack(verdict, { clusterId: cluster.clusterId, paused, storm, openIncidents: open.map((i) => i.incidentId) });
}

/**
 * One cluster's check as a round of the AWS schedule asked for it (HygieneCheckDue): run when the
 * round is one its hygiene.checkEveryMs falls in; a cluster deregistered since is skipped.
 */
export async function hygieneCheckAsked(deps: ClusterDeps, detail: DetailOf<'HygieneCheckDue'>): Promise<HygieneCheck> {
  const cluster = await deps.directory.get(detail.clusterId).catch((error: unknown) => {
    if (error instanceof UnknownClusterError) return undefined;
    throw error;
  });
  if (!cluster) {
    deps.log.info('leader hygiene check skipped: the cluster is no longer registered', { clusterId: detail.clusterId });
    return { kind: 'unknown-cluster' };
  }
  if (!cluster.policy.hygiene.enabled) return { kind: 'off' };
  if (!hygieneCheckDue(Date.parse(detail.at), cluster.policy.hygiene.checkEveryMs)) return { kind: 'not-due' };
  return checkLeaderHygiene(deps, cluster);
}
