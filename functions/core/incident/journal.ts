// The journal, typed: every step name is a constant here, and every line carries the fields its
// step says, so a reader takes facts from fields and never from text. journal-words.ts says each
// line in words.
import type { Decision, DecisionKind, ReasonCode, MemberId, PathName, Reachability } from '../common/index.ts';
import type { ClusterView, LeaderConsensus } from '../view/index.ts';

export const journalSteps = {
  incidentOpened: 'incident-opened',
  duplicateJoined: 'duplicate-joined',
  lateDuplicate: 'late-duplicate',
  probed: 'probed',
  retryScheduled: 'retry-scheduled',
  resumed: 'resumed',
  stepFailed: 'step-failed',
  leaderMoved: 'leader-moved',
  lockTaken: 'lock-taken',
  lockReleased: 'lock-released',
  snapshotTaken: 'snapshot-taken',
  snapshotFailed: 'snapshot-failed',
  memberRemoved: 'member-removed',
  leaderElected: 'leader-elected',
  actuatorCalled: 'actuator-called',
  // After the removal: the replacement check, and learners it saw and cleaned up.
  replacementChecked: 'replacement-checked',
  learnerSeen: 'learner-seen',
  learnerRemoved: 'learner-removed',
} as const;

/** A step with one fixed name. Decision lines and the move marker are named by the two below. */
export type NamedStep = (typeof journalSteps)[keyof typeof journalSteps];

/** Who journals a decision: each function, the sweep and a withdrawn request. */
export const deciders = ['probe-members', 'move-leader', 'schedule-retry', 'remediate', 'sweep', 'withdraw'] as const;
export type Decider = (typeof deciders)[number];
/** A decision's kind as journaled; 'failed' is an incident that ends failed after the removal. */
export type DecisionLineKind = Exclude<DecisionKind, 'move-leader'> | 'failed';
const decisionLineKinds = ['approve', 'retry', 'block', 'close', 'failed'] as const satisfies readonly DecisionLineKind[];
/** e.g. "move-leader:approve". */
export type DecisionStep = `${Decider}:${DecisionLineKind}`;

export const decisionStep = (from: Decider, kind: DecisionLineKind): DecisionStep => `${from}:${kind}`;
const decisionStepNames: ReadonlySet<string> = new Set(deciders.flatMap((d) => decisionLineKinds.map((k) => decisionStep(d, k))));

/**
 * The marker move-leader writes (as `leader-move-made@ATTEMPT`) the moment a move is made and
 * verified, before the commit that journals 'leader-moved': a crash in between leaves only it.
 */
export const LEADER_MOVE_MADE = 'leader-move-made';
export type MoveMadeStep = `${typeof LEADER_MOVE_MADE}@${number}`;
export const moveMadeStep = (attempt: number): MoveMadeStep => `${LEADER_MOVE_MADE}@${attempt}`;

/** A decision, as its line says it. */
export interface DecisionNote {
  reason: ReasonCode;
  message: string;
}

/** Leadership moved off the target: the LeaderMoved event's facts, and the approval's words. */
export interface LeaderMovedFacts {
  from: MemberId;
  to: MemberId;
  path: PathName;
  tookMs: number;
  message: string;
}

/** What move-leader decided once a move was made, kept so a crash before its commit loses neither. */
export interface MoveMade {
  decision: Decision;
  /** The views with the one taken to verify the move, when one was taken. */
  views?: ClusterView[];
  /** The move to say as LeaderMoved, at the attempt and time it was made. */
  moved?: LeaderMovedFacts & { attempt: number; at: number };
}

/** A snapshot before the removal: where it is, the member and path it came through, its size and SHA-256 as streamed. */
export interface SnapshotTaken {
  location: string;
  via: string;
  bytes: number;
  sha256: string;
  tookMs: number;
}

/** The leader among the rest after the removal. */
export interface Election {
  id: MemberId;
  name: string;
  term?: number;
  afterRemovalMs?: number;
}

export interface ListFailure {
  endpoint: string;
  reachability: Reachability;
  latencyMs: number;
}

/**
 * One member as a probe saw it, kept on the probe's journal line: the incident keeps only its last
 * views, and the report draws every probe's lane from these (a long grace window is most of them).
 */
export interface MemberSeen {
  memberId: MemberId;
  name?: string;
  /** The path that answered fastest; absent when none did. */
  path?: PathName;
  /** How each path that did not answer failed; absent when every path answered. */
  failed?: { path: PathName; reachability: Reachability }[];
  /** Whom it named leader ("0" for none) and at which term, when it answered with a status. */
  leaderId?: MemberId;
  term?: number;
}

/** The members of a view as a probe line keeps them. */
export function membersSeen(view: ClusterView): MemberSeen[] {
  return view.members.map((m) => {
    const answered = m.paths.filter((p) => p.reachability === 'ok').sort((a, b) => a.latencyMs - b.latencyMs)[0];
    const failed = m.paths.filter((p) => p.reachability !== 'ok').map((p) => ({ path: p.path, reachability: p.reachability }));
    return {
      memberId: m.id,
      ...(m.name ? { name: m.name } : {}),
      ...(answered ? { path: answered.path } : {}),
      ...(failed.length > 0 ? { failed } : {}),
      ...(m.status ? { leaderId: m.status.leaderId, term: m.status.raftTerm } : {}),
    };
  });
}

/** Each named step's fields. */
export interface JournalDetails {
  'incident-opened': { source: string; targetKey: string; reason: string; observedAt: string };
  /** A report joined the open incident, or another incident named the same member and ended. */
  'duplicate-joined': { source: string; reason: string } | { incidentId: string; reportedAs: string };
  /** A report observed before a remediation of its member ended: kept there, nothing reopened. */
  'late-duplicate': { source: string; reason: string; observedAt: string };
  /** `seen`: every member as this probe saw it, which the report draws its lanes from. */
  probed: { answered: number; members: number; leader: LeaderConsensus; leaderName?: string; listFailures: ListFailure[]; seen: MemberSeen[] };
  'retry-scheduled': { attempt: number; at: string; reason: ReasonCode };
  resumed: { attempt: number; at: string; reason: ReasonCode };
  'step-failed': { functionName: string; detailType: string; attempt: number; error: string; resumedAttempt: number; at: string };
  'leader-moved': LeaderMovedFacts;
  'lock-taken': { owner: string; where: string };
  'lock-released': { owner: string; where: string };
  /** Where the snapshot is, its size and SHA-256 as streamed, the member and path it came through. */
  'snapshot-taken': SnapshotTaken;
  /** A snapshot that could not be taken: blocked or retried when required, else the removal went on. */
  'snapshot-failed': { problem: string; required: boolean; transient: boolean };
  /** Removed (or found gone) by MemberRemove through `via`, or no longer in the member list at all. */
  'member-removed': { via: string; alreadyGone: boolean } | { absentFromList: string; removedBy?: string };
  'leader-elected': Election;
  'actuator-called': { actuator: string; said: string };
  /** What a check of the replacement found, when it says something: joined, overdue, checks ended; or what holds it, and its release (watch). */
  'replacement-checked': DecisionNote;
  /** A learner first seen: etcd does not say when a member was added, so its line says since when it is known. */
  'learner-seen': { memberId: MemberId; peerURLs: string[] };
  /** A stuck learner removed (it had no vote), through `via`. */
  'learner-removed': { memberId: MemberId; via: string; message: string };
}

type NamedLine = { [S in NamedStep]: { step: S; detail: JournalDetails[S] } }[NamedStep];
export type DecisionLine = { step: DecisionStep; detail: DecisionNote };
export type MoveMadeLine = { step: MoveMadeStep; detail: MoveMade };

/** One line as a step writes it. */
export type JournalLine = NamedLine | DecisionLine | MoveMadeLine;
export type JournalInput = JournalLine & { at: number };

interface Stored {
  /** True for entries written by `markStep`: at most one per incident and step. */
  isStepMarker: boolean;
}

/** One line as the journal gives it back. */
export type JournalEntry = JournalInput & Stored;

/** The steps a line may be marked with (`markStep`), and asked after (`stepDone`). */
export type MarkerStep =
  | typeof journalSteps.lockTaken
  | typeof journalSteps.snapshotTaken
  | typeof journalSteps.memberRemoved
  | typeof journalSteps.leaderElected
  | typeof journalSteps.actuatorCalled
  | MoveMadeStep;

export const isNamedStep = (step: string): step is NamedStep => (Object.values(journalSteps) as string[]).includes(step);
export const isDecisionStep = (step: string): step is DecisionStep => decisionStepNames.has(step);
export const isMoveMadeStep = (step: string): step is MoveMadeStep => step.startsWith(`${LEADER_MOVE_MADE}@`);

type LineOf<S extends NamedStep> = Extract<JournalInput, { step: S }>;

/** The entry's fields, when it is a line of `step`. */
export const isLine = <S extends NamedStep, E extends JournalInput>(entry: E, step: S): entry is E & LineOf<S> => entry.step === step;
export const isDecisionLine = <E extends JournalInput>(entry: E): entry is E & DecisionLine & { at: number } => isDecisionStep(entry.step);
export const isMoveMadeLine = <E extends JournalInput>(entry: E): entry is E & MoveMadeLine & { at: number } => isMoveMadeStep(entry.step);

/** The first marker of `step`, with its fields. */
export const markerOf = <S extends NamedStep>(journal: readonly JournalEntry[], step: S): (JournalEntry & LineOf<S>) | undefined =>
  journal.find((e): e is JournalEntry & LineOf<S> => e.isStepMarker && isLine(e, step));
