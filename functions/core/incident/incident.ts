// The incident: one remediation of one target member in one cluster, as every store keeps it. The
// outbox carries what the edge publishes and schedules, so its event and schedule types are the
// edge's own (the port fills them in); everything else is core's.
import { type Decision, decidedBy } from '../common/index.ts';
import { type CarriedStreak, describeSelector, type TargetSelector, describeMember, type ClusterView } from '../view/index.ts';
import type { JournalInput } from './journal.ts';

/**
 * Every state an incident is in; each but 'open' is an ending, with its row in incident-endings.ts.
 * 'awaiting-replacement' ends the pipeline's work (the member is out, a leader stands, the machine
 * was asked for) but not the incident's watch: it is checked until the cluster is whole again
 * ('completed'), the one ending that follows another.
 */
export const incidentStates = ['open', 'awaiting-replacement', 'completed', 'blocked', 'closed', 'failed'] as const;

export type IncidentState = (typeof incidentStates)[number];
export type IncidentOutcome = Exclude<IncidentState, 'open'>;

/** The states an ending is reached from: each from 'open'; 'completed' also once the removal awaits its replacement. */
export const endsFrom = (to: IncidentOutcome): readonly IncidentState[] => (to === 'completed' ? ['open', 'awaiting-replacement'] : ['open']);

/** What a committed step still has to say or schedule; `Event` and `Schedule` are the edge's types. */
export type OutboxEntryOf<Event, Schedule> =
  | { kind: 'journal'; entry: JournalInput }
  | { kind: 'schedule'; request: Schedule }
  | { kind: 'publish'; event: Event };

export interface InFlight {
  /** "step@attempt". */
  key: string;
  /** The Lambda request id that holds it; absent for the local runtime. */
  holder?: string;
  /** Epoch ms; past it, the holder is taken for dead and the step may be taken again. */
  until: number;
}

/** One remediation of one target member in one cluster. Times are epoch milliseconds. */
export interface IncidentOf<Event, Schedule> {
  incidentId: string;
  clusterId: string;
  /** Canonical form of `target`, e.g. "memberName=etcd-0"; see core `targetKeyOf`. */
  targetKey: string;
  target: Record<string, string>;
  reason: string;
  state: IncidentState;
  openedAt: number;
  updatedAt: number;
  /** Every retry, waiting or not: orders events, so a stale one is recognised. */
  attempt: number;
  /** Retries that only waited (see waitingReasons): they do not count against the attempt budget. */
  waits: number;
  immediateReprobes: number;
  /** Set once the target is resolved to an etcd member. */
  memberId?: string;
  /** The etcd cluster_id the incident's first answering probe reached: it is never judged against another. */
  etcdClusterId?: string;
  memberName?: string;
  /** Recent cluster views, oldest first, as keptViews keeps them (view-history.ts). */
  views: ClusterView[];
  lastDecision?: Decision;
  /** When and at which term the target was first seen unreachable as leader, in the current streak. */
  leaderUnreachable?: CarriedStreak;
  result?: unknown;
  /**
   * What a committed step still has to say or schedule: written in the same conditional write as
   * the step's outcome, carried out after it, and cleared once done. Whoever reads the incident
   * next with a non-empty outbox carries it out again, so a lost publish is never lost for good.
   */
  outbox: OutboxEntryOf<Event, Schedule>[];
  /** Steps committed at the current attempt ("move-leader@3"): a redelivery of their event does nothing. */
  stepsDone: string[];
  /** The step running now, and until when its lease holds; a duplicate delivery meanwhile is ignored. */
  inFlight?: InFlight;
  /** Bumped by every write; `updateIncident` is conditional on it. */
  version: number;
}

export const isIncidentState = (value: string): value is IncidentState => (incidentStates as readonly string[]).includes(value);

/** DUPLICATE_INCIDENT: the member, reported by another name or id, already has an incident; this report is recorded there, and this incident ends. */
export const duplicateOf = (member: { id: string; name: string }, twin: { incidentId: string; target: TargetSelector }): Decision & { kind: 'close' } =>
  decidedBy(
    {
      kind: 'close',
      reason: 'DUPLICATE_INCIDENT',
      message: `${describeMember(member)} is already being remediated by incident ${twin.incidentId} (reported as ${describeSelector(twin.target)}); this report is recorded there, and this incident ends.`,
      evidence: { incidentId: twin.incidentId },
    },
    'duplicate-incident',
  );
