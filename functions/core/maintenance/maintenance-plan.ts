// Maintenance, as policy: whether a cluster's databases need it (a NOSPACE alarm, fragmentation,
// the quota near), whether it may run now (a member being defragmented stalls, so it counts as
// down: quorum must hold with it and every unhealthy or disrupted member down), and the steps, one
// member at a time: learners and followers first, the leader last after leadership is moved off it
// (a defragmentation stalls its member's writes, and on the leader that stalls the cluster's).
// Planned by level: before each step the plan is made again from a fresh view and the run's
// journal, and its first step is the one to run. The order is the same from every remediator
// (learners, then followers in the member list's order, the leader last), so two that cannot take
// the lock (etcd refuses the lease under NOSPACE) walk the members in step, and etcd runs two
// defragmentations of one member one after the other.
// Pure: the executor carries the steps out, each journaled with its own deadline.
import type { MemberId, ReasonCode } from '../common/index.ts';
import {
  atRiskMembers,
  describeMember,
  describeMemberIn,
  disruptionOf,
  listWords,
  noSpaceRaisedBy,
  quorumSize,
  rolloutOf,
  type ClusterView,
  type MemberView,
} from '../view/index.ts';
import { ETCD_DEFAULT_QUOTA_BYTES, type MaintenanceRules } from './maintenance-rules.ts';
import { owedDefragmentation, type MaintenanceRun } from './maintenance-record.ts';

export type MaintenanceTrigger =
  | { kind: 'nospace'; raisedBy: MemberId[] }
  | { kind: 'fragmented'; member: MemberId; freeBytes: number; freeShare: number }
  | { kind: 'near-quota'; member: MemberId; dbSize: number; quotaBytes: number };

export type MaintenanceStep =
  /** Compacts the keyspace history up to `revision`, no further (what the API server needs stays). */
  | { kind: 'compact'; revision: number }
  | { kind: 'move-leader'; from: MemberId }
  | { kind: 'defragment'; member: MemberId; deadlineMs: number }
  | { kind: 'disarm' }
  /** Checks the databases shrank and, after a NOSPACE, that a write is accepted. */
  | { kind: 'verify' };

export interface MaintenanceInput {
  view: ClusterView;
  rules: MaintenanceRules;
  /** etcd_server_quota_backend_bytes, when the scrape read it; etcd's default otherwise. */
  quotaBytes?: number;
  /**
   * A revision the cluster had at least 5 minutes ago. The Kubernetes API server compacts every
   * 5 minutes to the revision it saw 5 minutes before, so compacting to this one takes nothing a
   * watch may still ask for. Without it, a NOSPACE is cleared without a compaction.
   */
  compactTo?: number;
  /** When each member was last defragmented by us. */
  lastDefragmentedAt: Readonly<Record<MemberId, number>>;
  /** The run in flight: its steps done are not planned again, and a NOSPACE run ends with its write checked. */
  run?: Pick<MaintenanceRun, 'reason' | 'done'>;
  now: number;
}

export interface MaintenancePlan {
  reason: ReasonCode;
  message: string;
  triggers: MaintenanceTrigger[];
  steps: MaintenanceStep[];
}

const MiB = 1024 * 1024;
const size = (bytes: number): string => (bytes >= 10 * MiB ? `${Math.round(bytes / MiB)} MiB` : `${Math.round(bytes / 1024)} KiB`);
const percent = (share: number): string => `${Math.round(share * 100)} %`;

/** What calls for maintenance, member by member; a NOSPACE alarm once for the cluster. */
export function maintenanceTriggers(members: readonly MemberView[], rules: MaintenanceRules, quotaBytes = ETCD_DEFAULT_QUOTA_BYTES): MaintenanceTrigger[] {
  const raisedBy = noSpaceRaisedBy({ members });
  const triggers: MaintenanceTrigger[] = raisedBy.length > 0 ? [{ kind: 'nospace', raisedBy }] : [];
  for (const m of members) {
    const status = m.status;
    if (!status || status.dbSize <= 0) continue;
    const free = status.dbSizeInUse === undefined ? 0 : Math.max(0, status.dbSize - status.dbSizeInUse);
    if (free >= rules.fragmentedMinBytes && free / status.dbSize >= rules.fragmentedShare)
      triggers.push({ kind: 'fragmented', member: m.id, freeBytes: free, freeShare: free / status.dbSize });
    else if (status.dbSize >= quotaBytes * rules.nearQuotaShare) triggers.push({ kind: 'near-quota', member: m.id, dbSize: status.dbSize, quotaBytes });
  }
  return triggers;
}

function describeTrigger(t: MaintenanceTrigger, view: ClusterView): string {
  const name = (id: MemberId) => describeMemberIn(view, id);
  switch (t.kind) {
    case 'nospace':
      return `a NOSPACE alarm raised by ${listWords(t.raisedBy.map(name))}`;
    case 'fragmented':
      return `${name(t.member)} holds ${size(t.freeBytes)} of free pages (${percent(t.freeShare)} of its database)`;
    case 'near-quota':
      return `${name(t.member)}'s database is ${size(t.dbSize)}, ${percent(t.dbSize / t.quotaBytes)} of its ${size(t.quotaBytes)} quota`;
  }
}

const plan = (reason: ReasonCode, message: string, triggers: MaintenanceTrigger[], steps: MaintenanceStep[] = []): MaintenancePlan => ({
  reason,
  message,
  triggers,
  steps,
});

/** Learners first, then followers, in the member list's order; the leader last, after a move off it. */
function inOrder(view: ClusterView, members: readonly MemberView[], deadlineMs: number): MaintenanceStep[] {
  const leaderId = view.leader.consensus === 'agreed' ? view.leader.id : undefined;
  const ranked = [...members.filter((m) => m.isLearner), ...members.filter((m) => !m.isLearner && m.id !== leaderId)];
  const steps: MaintenanceStep[] = ranked.map((m) => ({ kind: 'defragment', member: m.id, deadlineMs }));
  const leader = members.find((m) => m.id === leaderId);
  if (!leader) return steps;
  const voters = view.members.filter((m) => !m.isLearner).length;
  return [...steps, ...(voters > 1 ? [{ kind: 'move-leader' as const, from: leader.id }] : []), { kind: 'defragment', member: leader.id, deadlineMs }];
}

/**
 * Whether one member may be down for its defragmentation: the quorum holds with it and every
 * unhealthy or disrupted member down. `passing` when only a disruption takes the margin: it ends
 * (a drain, a rollout), and the run waits for it rather than asking a person to restore members.
 */
function noMargin(view: ClusterView): { words: string; passing: boolean } | undefined {
  const voting = view.members.filter((m) => !m.isLearner);
  const healthy = voting.filter((m) => m.healthy);
  const atRisk = atRiskMembers(view.members);
  const rollout = rolloutOf(view);
  const up = healthy.length - atRisk.length - (rollout ? 1 : 0) - 1;
  const needed = quorumSize(voting.length);
  if (up >= needed) return undefined;
  const unhealthy = voting.filter((m) => !m.healthy);
  const down = [
    ...unhealthy.map(describeMember),
    ...atRisk.map((m) => `${describeMember(m)}: ${disruptionOf(m)}`),
    ...(rollout ? [`one member more (${rollout})`] : []),
  ];
  return {
    words: `with one member stalled by its defragmentation, ${Math.max(0, up)} of ${voting.length} voting members would answer, below the quorum of ${needed}${down.length > 0 ? ` (${listWords(down)} counted down)` : ''}`,
    passing: healthy.length - 1 >= needed,
  };
}

export function maintenancePlan(input: MaintenanceInput): MaintenancePlan {
  const { view, rules, now } = input;
  const done = new Set((input.run?.done ?? []).filter((d) => d.outcome === 'done').map((d) => d.key));
  const triggers = maintenanceTriggers(view.members, rules, input.quotaBytes);
  const alarmed = triggers.find((t) => t.kind === 'nospace');
  // A NOSPACE run goes on once its alarm is disarmed: the write that proves it is its last step.
  const nospaceRun = input.run?.reason === 'MAINTENANCE_NOSPACE';
  const owed = owedDefragmentation(input.run) !== undefined;
  if (triggers.length === 0 && !(nospaceRun && !done.has('verify')) && !owed)
    return plan('MAINTENANCE_NOT_NEEDED', 'No alarm, no fragmented database and none near its quota: nothing to do.', triggers);
  const why =
    triggers.length > 0
      ? listWords(triggers.map((t) => describeTrigger(t, view)))
      : owed
        ? 'a member whose leadership was moved off for its defragmentation is still to be defragmented'
        : 'the NOSPACE alarm was disarmed';
  const Why = `${why[0]!.toUpperCase()}${why.slice(1)}`;
  const corrupt = view.members.filter((m) => m.status?.alarms.includes('CORRUPT'));
  if (corrupt.length > 0)
    return plan(
      'MAINTENANCE_CORRUPT',
      `${Why}, but a CORRUPT alarm stands on ${listWords(corrupt.map(describeMember))}: nothing is maintained; a person must find which member's data diverged (etcd's data corruption guide) before any member is defragmented or disarmed.`,
      triggers,
    );
  const nospace = alarmed !== undefined || nospaceRun;
  const allowed = rules.enabled || (nospace && rules.clearNoSpace);
  if (!allowed)
    return plan(
      'MAINTENANCE_OFF',
      `${Why}, but maintenance is off for the cluster${alarmed ? ' and so is clearing NOSPACE (maintenance.clearNoSpace false)' : ''}: nothing is done; turn maintenance.enabled on, or defragment by hand, one member at a time and the leader last.`,
      triggers,
    );
  const reachable = view.members.filter((m) => m.reachable && m.started);
  const compact = nospace && input.compactTo !== undefined && !done.has('compact') ? [{ kind: 'compact' as const, revision: input.compactTo }] : [];
  // Under NOSPACE every member the run has not defragmented yet: what a defragmentation reclaims
  // cannot be read before it (etcd refreshes dbSizeInUse when it commits a write, and under
  // NOSPACE none comes: the pages a compaction freed still read as in use, as tried on 3.4).
  // Otherwise those a trigger names, each once per memberEveryMs.
  // A member leadership was moved off for its defragmentation is defragmented next, whatever one look at its figures says.
  const movedOff = (m: MemberView) => done.has(`move-leader:${m.id}`);
  const wanted = (nospace ? reachable : reachable.filter((m) => movedOff(m) || triggers.some((t) => t.kind !== 'nospace' && t.member === m.id))).filter(
    (m) => !done.has(`defragment:${m.id}`),
  );
  const due = nospace ? wanted : wanted.filter((m) => now - (input.lastDefragmentedAt[m.id] ?? -Infinity) >= rules.memberEveryMs);
  const finish: MaintenanceStep[] = nospace
    ? [...(alarmed ? [{ kind: 'disarm' as const }] : []), ...(done.has('verify') ? [] : [{ kind: 'verify' as const }])]
    : [];
  if (due.length === 0 && !nospace)
    return plan(
      wanted.length > 0 ? 'MAINTENANCE_RATE_LIMITED' : 'MAINTENANCE_NOT_NEEDED',
      wanted.length > 0
        ? `${Why}, but ${listWords(wanted.map(describeMember))} ${wanted.length === 1 ? 'was' : 'were'} defragmented less than ${Math.round(rules.memberEveryMs / 60_000)} min ago: it waits.`
        : `${Why}: every member it names was defragmented in this run.`,
      triggers,
    );
  // Only a member's defragmentation stalls it; compacting, disarming and checking a write take no member down.
  // An election is over in moments (a move of leadership, ours or a person's, is one): waited out, never a block.
  if (due.length > 0 && view.leader.consensus !== 'agreed')
    return plan(
      'MAINTENANCE_ELECTION',
      `${Why}, but the members do not agree on a leader now (an election, or a split): nothing is defragmented until they do.`,
      triggers,
    );
  const margin = due.length > 0 ? noMargin(view) : undefined;
  if (margin?.passing)
    return plan(
      'DISRUPTION_IN_PROGRESS',
      `${Why}, but ${margin.words}: nothing is defragmented until that disruption ends (the Node uncordoned, or the Machine gone and its replacement joined).`,
      triggers,
    );
  if (margin)
    return plan(
      'MAINTENANCE_NO_MARGIN',
      `${Why}, but ${margin.words}: nothing is defragmented; restore the members counted down first${alarmed ? ', or raise --quota-backend-bytes on every member and disarm the alarm' : ''}.`,
      triggers,
    );
  const steps: MaintenanceStep[] = [...compact, ...inOrder(view, due, rules.defragmentDeadlineMs), ...finish];
  const reason: ReasonCode = nospace
    ? 'MAINTENANCE_NOSPACE'
    : triggers.some((t) => t.kind === 'fragmented')
      ? 'MAINTENANCE_FRAGMENTED'
      : triggers.some((t) => t.kind === 'near-quota')
        ? 'MAINTENANCE_NEAR_QUOTA'
        : (input.run?.reason ?? 'MAINTENANCE_FRAGMENTED');
  return plan(reason, `${Why}: ${describeSteps(steps, view)}.`, triggers, steps);
}

export function describeSteps(steps: readonly MaintenanceStep[], view: ClusterView): string {
  const name = (id: MemberId) => describeMemberIn(view, id);
  const words = steps.map((s) => {
    switch (s.kind) {
      case 'compact':
        return `compact the history to revision ${s.revision}`;
      case 'move-leader':
        return `move leadership off ${name(s.from)}`;
      case 'defragment':
        return `defragment ${name(s.member)}`;
      case 'disarm':
        return 'disarm the alarm';
      case 'verify':
        return 'check the databases shrank and writes are accepted';
    }
  });
  return `${words.join(', then ')}, one member at a time`;
}
