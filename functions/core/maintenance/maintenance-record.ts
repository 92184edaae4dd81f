// A cluster's maintenance record: one per cluster, written whole under a version (as leader
// hygiene's is), so two deliveries of one step never both claim it. It keeps when each member was
// last defragmented (the rate limit), the revisions seen (where a compaction may go), and the run in
// flight: the steps done, each journaled, and the one claimed now. The steps themselves are planned
// again from a fresh view before each one (maintenance-plan.ts): what etcd says is done is done.
import { z } from 'zod';
import type { MemberId, ReasonCode } from '../common/index.ts';
import type { MaintenanceStep } from './maintenance-plan.ts';

/** One step as the journal keeps it. */
export interface MaintenanceStepDone {
  key: string;
  at: number;
  tookMs: number;
  outcome: 'done' | 'failed';
  message: string;
}

export interface MaintenanceRun {
  runId: string;
  startedAt: number;
  /** The plan's reason when it started (MAINTENANCE_NOSPACE, …): a NOSPACE run ends with a write checked. */
  reason: ReasonCode;
  /** Who asked: an incident (`incident:<id>`) or the periodic check. */
  askedBy: string;
  done: MaintenanceStepDone[];
  /** The step one executor runs until `until`: a second delivery leaves it alone; a crash frees it then. */
  claim?: { key: string; owner: string; until: number };
}

export interface MaintenanceRunEnded extends Omit<MaintenanceRun, 'claim'> {
  endedAt: number;
  outcome: 'done' | 'waiting' | 'blocked' | 'failed';
  endReason: ReasonCode;
  message: string;
}

export interface MaintenanceRecord {
  /** Member id → when we last defragmented it. */
  defragmentedAt: Record<MemberId, number>;
  /** The cluster's revision as seen, oldest first, one a minute at most, the last hour. */
  revisions: { at: number; revision: number }[];
  run?: MaintenanceRun;
  lastRun?: MaintenanceRunEnded;
}

export const emptyMaintenanceRecord = (): MaintenanceRecord => ({ defragmentedAt: {}, revisions: [] });

/** The key a step is journaled and claimed under: one per member and kind. */
export function stepKey(step: MaintenanceStep): string {
  switch (step.kind) {
    case 'defragment':
      return `defragment:${step.member}`;
    case 'move-leader':
      return `move-leader:${step.from}`;
    default:
      return step.kind;
  }
}

const REVISIONS_KEPT_MS = 3_600_000;
const REVISION_EVERY_MS = 60_000;
/** The Kubernetes API server compacts every 5 minutes to the revision it saw 5 minutes before. */
export const COMPACT_BEHIND_MS = 5 * 60_000;

/** The record with `revision` seen at `now`: one sample a minute, the last hour's. */
export function withRevision(record: MaintenanceRecord, revision: number | undefined, now: number): MaintenanceRecord {
  const last = record.revisions.at(-1);
  if (revision === undefined || (last && now - last.at < REVISION_EVERY_MS)) return record;
  const kept = record.revisions.filter((r) => now - r.at <= REVISIONS_KEPT_MS);
  return { ...record, revisions: [...kept, { at: now, revision }] };
}

/**
 * A revision the cluster had at least 5 minutes ago: compacting to it takes nothing a watch of the
 * API server may still ask for. Undefined when none was seen that long ago.
 */
export const safeCompactRevision = (record: MaintenanceRecord, now: number): number | undefined =>
  record.revisions.filter((r) => now - r.at >= COMPACT_BEHIND_MS).at(-1)?.revision;

/** Who started a run, and why: kept with it. */
export type RunStart = Pick<MaintenanceRun, 'runId' | 'reason' | 'askedBy'>;

export type StepClaim = { claimed: true; record: MaintenanceRecord } | { claimed: false; by: NonNullable<MaintenanceRun['claim']> };

/**
 * Claims step `key` for `owner` until `until`, starting a run when none is in flight. Another
 * owner's claim that has not lapsed holds it: that delivery is running the step.
 */
export function claimStep(record: MaintenanceRecord, start: RunStart, key: string, owner: string, now: number, until: number): StepClaim {
  const run = record.run ?? { ...start, startedAt: now, done: [] };
  if (run.claim && run.claim.owner !== owner && run.claim.until > now) return { claimed: false, by: run.claim };
  return { claimed: true, record: { ...record, run: { ...run, claim: { key, owner, until } } } };
}

/** The step's end journaled in the run, its claim let go; a member defragmented is dated for the rate limit. */
export function stepEnded(record: MaintenanceRecord, done: MaintenanceStepDone, defragmented?: MemberId): MaintenanceRecord {
  if (!record.run) return record;
  const { claim: _claim, ...run } = record.run;
  return {
    ...record,
    run: { ...run, done: [...run.done, done] },
    ...(defragmented && done.outcome === 'done' ? { defragmentedAt: { ...record.defragmentedAt, [defragmented]: done.at } } : {}),
  };
}

/** The member a step's key names when the step is of `kind` (stepKey's inverse); undefined otherwise. */
export const memberOfStep = (key: string, kind: 'defragment' | 'move-leader'): MemberId | undefined =>
  key.startsWith(`${kind}:`) ? key.slice(kind.length + 1) : undefined;

/** The members the run has defragmented so far (steps journaled done). */
export const defragmentedMembers = (run: Pick<MaintenanceRun, 'done'> | undefined): Set<MemberId> =>
  new Set((run?.done ?? []).flatMap((d) => (d.outcome === 'done' ? (memberOfStep(d.key, 'defragment') ?? []) : [])));

/** The member a run moved leadership off for its defragmentation and has not defragmented since, if any. */
export function owedDefragmentation(run: Pick<MaintenanceRun, 'done'> | undefined): MemberId | undefined {
  const defragmented = defragmentedMembers(run);
  return (run?.done ?? [])
    .filter((d) => d.outcome === 'done')
    .map((d) => memberOfStep(d.key, 'move-leader'))
    .find((moved) => moved !== undefined && !defragmented.has(moved));
}

/** A member's defragmentation claimed and not lapsed at `now`: that member stalls any moment until `until`. */
export interface DefragmentationInFlight {
  member: MemberId;
  runId: string;
  until: number;
}

/** The defragmentation a run has claimed now, if any (its claim not lapsed). */
export function defragmentationInFlight(record: Pick<MaintenanceRecord, 'run'> | undefined, now: number): DefragmentationInFlight | undefined {
  const claim = record?.run?.claim;
  const member = claim && claim.until > now ? memberOfStep(claim.key, 'defragment') : undefined;
  return member === undefined ? undefined : { member, runId: record!.run!.runId, until: claim!.until };
}

/** When the run in flight stalled a member by defragmenting it: each step journaled, and the one claimed now. */
export interface DefragmentationSpan {
  member: MemberId;
  from: number;
  until: number;
}

export function defragmentationSpans(record: Pick<MaintenanceRecord, 'run'> | undefined, now: number): DefragmentationSpan[] {
  const run = record?.run;
  if (!run) return [];
  const journaled = run.done.flatMap((d) => {
    const member = memberOfStep(d.key, 'defragment');
    return member === undefined ? [] : [{ member, from: d.at, until: d.at + d.tookMs }];
  });
  const claimed = defragmentationInFlight(record, now);
  // The claim's start is not kept: it began after the last step ended.
  return [...journaled, ...(claimed ? [{ member: claimed.member, from: lastStepAt(run), until: claimed.until }] : [])];
}

/** Members our own defragmentation stalled while a look that began at `at` and took up to `lookMs` ran: down to it for that reason alone. */
export const stalledByDefragmentation = (spans: readonly DefragmentationSpan[], at: number, lookMs: number): MemberId[] => [
  ...new Set(spans.filter((s) => s.from <= at + lookMs && s.until >= at).map((s) => s.member)),
];

/** The step's claim let go, nothing journaled: the step runs at the next ask. */
export function claimReleased(record: MaintenanceRecord): MaintenanceRecord {
  if (!record.run?.claim) return record;
  const { claim: _claim, ...run } = record.run;
  return { ...record, run };
}

/**
 * A run that took no step in this long was left (nobody asked again: the incident ended, the
 * check was turned off): it is ended, and the next maintenance plans from the start, so the steps
 * an old run did never stand for a new alarm.
 */
export const RUN_ABANDONED_MS = 3_600_000;

/** When the run last moved: its newest step, or its start. */
export const lastStepAt = (run: MaintenanceRun): number => Math.max(run.startedAt, ...run.done.map((d) => d.at + d.tookMs));

/** A step that failed this many times in one run ends it failed; fewer, and the next ask tries it again. */
export const MAX_STEP_FAILURES = 3;

/** How often `key` failed in the run so far. */
export const failuresOf = (record: MaintenanceRecord, key: string): number =>
  (record.run?.done ?? []).filter((d) => d.key === key && d.outcome === 'failed').length;

/** The run over: kept as the last one, with how and why it ended. A record with no run in flight keeps a run of its own. */
export function runEnded(
  record: MaintenanceRecord,
  start: RunStart,
  ending: Pick<MaintenanceRunEnded, 'outcome' | 'endReason' | 'message'>,
  now: number,
): MaintenanceRecord {
  const { claim: _claim, ...run } = record.run ?? { ...start, startedAt: now, done: [] };
  const { run: _ended, ...rest } = record;
  return { ...rest, lastRun: { ...run, ...ending, endedAt: now } };
}

const member = z.string();
const stepDoneSchema = z.object({ key: z.string(), at: z.number(), tookMs: z.number(), outcome: z.enum(['done', 'failed']), message: z.string() });
const runFields = {
  runId: z.string(),
  startedAt: z.number(),
  reason: z.string(),
  askedBy: z.string(),
  done: z.array(stepDoneSchema),
};
const recordSchema = z.object({
  defragmentedAt: z.record(member, z.number()),
  revisions: z.array(z.object({ at: z.number(), revision: z.number() })),
  run: z.object({ ...runFields, claim: z.object({ key: z.string(), owner: z.string(), until: z.number() }).optional() }).optional(),
  lastRun: z
    .object({
      ...runFields,
      endedAt: z.number(),
      outcome: z.enum(['done', 'waiting', 'blocked', 'failed']),
      endReason: z.string(),
      message: z.string(),
    })
    .optional(),
});

export const maintenanceRecordText = (record: MaintenanceRecord): string => JSON.stringify(record);

/** Throws, naming `where`, when the stored text is not a maintenance record. */
export function maintenanceRecordFromText(text: string, where: string): MaintenanceRecord {
  const parsed = recordSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${where} is not a maintenance record: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data as MaintenanceRecord;
}
