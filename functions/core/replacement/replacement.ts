// One member down at a time, for every remediator: after a removal, the next one waits until the
// cluster is back to the size it had before (the replacement joined), unless policy allows
// shrinking. Read from the removal record every remediator writes into the cluster's own etcd.
import type { Decision } from '../common/index.ts';
import { describeDuration, describeTime, describeMember, type ClusterView } from '../view/index.ts';

/** One removal, as the remediator that made it recorded it before calling MemberRemove. */
export interface RemovalRecord {
  memberId: string;
  memberName: string;
  incidentId: string;
  /** The incident's target key (e.g. "memberName=etcd-1"): KCP's retry count is per target. */
  targetKey: string;
  /** Set once MemberRemove succeeded; until then the record is an intent. */
  confirmed?: boolean;
  /** Epoch ms. */
  at: number;
  /** Voting members before the removal: the size the cluster must be back to before the next one. */
  sizeBefore: number;
  /** Who removed it: the lock owner, "incident:<id>:<run>". */
  by: string;
}

/** How many removals the record keeps: enough for KCP's retry count over minHealthyPeriod. */
export const MAX_REMOVAL_RECORDS = 20;

/** The newest removal, the one whose replacement is owed first. */
export const lastOf = (records: readonly RemovalRecord[]): RemovalRecord | undefined =>
  records.reduce<RemovalRecord | undefined>((newest, r) => (!newest || r.at > newest.at ? r : newest), undefined);

/** The records with `record` in place of the same incident's earlier one, newest MAX_REMOVAL_RECORDS. */
export const withRecord = (records: readonly RemovalRecord[], record: RemovalRecord): RemovalRecord[] =>
  [...records.filter((r) => r.incidentId !== record.incidentId), record].sort((a, b) => a.at - b.at).slice(-MAX_REMOVAL_RECORDS);

/** Times of the confirmed removals of one target, for KCP's minHealthyPeriod and maxRetry. */
export const removalTimesOf = (records: readonly RemovalRecord[], targetKey: string): number[] =>
  records.filter((r) => r.confirmed && r.targetKey === targetKey).map((r) => r.at);

export interface ReplacementContext {
  view: ClusterView;
  targetId: string;
  incidentId: string;
  allowShrink: boolean;
  now: number;
}

export interface RemovedContext {
  incidentId: string;
  memberId?: string;
  memberName?: string;
  name: string;
  memberGone: boolean;
}

/**
 * The newest removal of the target by another incident (the same member reported twice, or two
 * remediators at once). With the member gone from the list, the other's intent counts too: it sent
 * MemberRemove, and it replaces the machine on resume if it died before confirming.
 */
export function removalByAnother(records: readonly RemovalRecord[], ctx: RemovedContext): RemovalRecord | undefined {
  const names = (r: RemovalRecord): boolean =>
    (ctx.memberId !== undefined && r.memberId === ctx.memberId) || (!!ctx.memberName && r.memberName === ctx.memberName);
  return records.filter((r) => (r.confirmed || ctx.memberGone) && r.incidentId !== ctx.incidentId && names(r)).at(-1);
}

export interface AfterAnother {
  /** The removing incident is this state's own and replaces the machine (it is open, or removed the member and asked for the machine). */
  replacedByIt: boolean;
  /** The Machine the report named: a replacement of it is owed to whoever asked. */
  machineName?: string;
}

/**
 * The target is already out, removed by another incident. When that incident is this state's own,
 * it replaces the machine: this one ends there. When it is not (another remediator, with a state
 * of its own: it may have no Machine actuator at all) and the report named a Machine, nothing else
 * here replaces that Machine, so this incident does, removing nothing from etcd. Otherwise nothing
 * is left for it to do.
 */
export function removedByAnother(records: readonly RemovalRecord[], ctx: RemovedContext & AfterAnother): Decision | undefined {
  const by = removalByAnother(records, ctx);
  if (!by) return undefined;
  const removed = `${ctx.name} was removed by incident ${by.incidentId} at ${describeTime(by.at)} (${by.by})`;
  const evidence = { incidentId: by.incidentId, removedBy: by.by, removedAt: by.at };
  if (ctx.replacedByIt) {
    return {
      kind: 'close',
      reason: 'DUPLICATE_INCIDENT',
      message: `${removed}, which replaces its machine; nothing is left for this incident to do, and it ends.`,
      evidence,
    };
  }
  if (ctx.machineName) {
    return {
      kind: 'approve',
      reason: 'MEMBER_ALREADY_REMOVED',
      leaderMove: 'not-needed',
      message: `${removed}, which this state does not hold, so nothing here replaces Machine ${ctx.machineName}: this incident replaces it, removing nothing from etcd (the Machine is deleted only if it is the one read, by its UID).`,
      evidence: { ...evidence, machine: ctx.machineName },
    };
  }
  return {
    kind: 'close',
    reason: 'DUPLICATE_INCIDENT',
    message: `${removed}, a remediator this state does not hold: its machine is that remediator's to replace; nothing is left for this incident to do, and it ends.`,
    evidence,
  };
}

/** A block when an earlier removal (of another incident) is not yet replaced; undefined otherwise. */
export function replacementPending(records: readonly RemovalRecord[], ctx: ReplacementContext): Decision | undefined {
  const last = lastOf(records);
  if (!last || ctx.allowShrink || last.incidentId === ctx.incidentId) return undefined;
  const voting = ctx.view.quorum.voting;
  if (voting >= last.sizeBefore) return undefined;
  const target = ctx.view.members.find((m) => m.id === ctx.targetId);
  const name = target ? describeMember(target) : ctx.targetId;
  const removed = describeMember({ id: last.memberId, name: last.memberName });
  return {
    kind: 'block',
    reason: 'REPLACEMENT_PENDING',
    message:
      `${removed} was removed ${describeDuration(Math.max(0, ctx.now - last.at))} ago (${describeTime(last.at)}, by ${last.by}), leaving ${voting} of the ${last.sizeBefore} voting members the cluster had, ` +
      `and no replacement has joined since; blocked, ${name} is not removed while the cluster is short. Add the replacement (or bring ${last.memberName || last.memberId} back), then report ${name} again; ` +
      `or allow shrinking (--allow-shrink, policy allowShrink) if a smaller cluster is intended.`,
    evidence: { lastRemoval: last, votingNow: voting },
  };
}

/**
 * The record to write before removing the target: the size to get back to is the larger of the
 * cluster's size now and a size an earlier, still unreplaced removal left pending, so removing
 * a learner (or shrinking on purpose) never erases a replacement still owed.
 */
export function removalRecordFor(
  records: readonly RemovalRecord[],
  ctx: Pick<ReplacementContext, 'view' | 'targetId' | 'incidentId' | 'now'> & { by: string; targetKey: string },
): RemovalRecord {
  const last = lastOf(records);
  const voting = ctx.view.quorum.voting;
  const owed = last && last.sizeBefore > voting ? last.sizeBefore : voting;
  const target = ctx.view.members.find((m) => m.id === ctx.targetId);
  return {
    memberId: ctx.targetId,
    memberName: target?.name ?? '',
    incidentId: ctx.incidentId,
    targetKey: ctx.targetKey,
    at: ctx.now,
    sizeBefore: owed,
    by: ctx.by,
  };
}
