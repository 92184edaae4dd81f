// THE table of how an incident ends, as data: for each terminal state, the event that says it, the
// CLI's outcome word and exit code (README "Exit codes"), the phase an EtcdRemediationRequest shows
// (its CRD's enum), the metric counted, and what it means. Where one state ends differently by
// reason (a close: recovered, withdrawn, done by another), the reason's row says how. The catalogue,
// the stores, the CLI, the request status, the metrics and the matrix all read it; none keeps a list.
import type { IncidentOutcome, IncidentState } from './incident.ts';
import type { reasonTable, ReasonCode } from '../common/index.ts';

/** The events that end an incident; events/catalogue.ts checks each is one of its detail types. */
export type EndingDetailType = 'RemediationCompleted' | 'RemediationReplaced' | 'RemediationBlocked' | 'RemediationClosed' | 'RemediationFailed';

/**
 * The phases an ending writes on an EtcdRemediationRequest: one that ends the request, or, where
 * the request outlives the incident (see `requestGoesOn`), Running or Pending.
 */
export type EndingPhase = 'AwaitingReplacement' | 'Completed' | 'Blocked' | 'Failed' | 'Cancelled' | 'Recovered' | 'Running' | 'Pending';

/**
 * How a request goes on after an incident that did not end it: in the incident that holds its
 * member (named by the ending's evidence.incidentId), reported again once Cluster API allows it, or
 * in the same incident, which is checked until its replacement joins.
 */
export type RequestGoesOn = 'in-holder' | 'when-allowed' | 'until-replaced';

/** What the CLI prints as `outcome` for an ending (it adds 'planned' for plan). */
export type EndingOutcome = 'awaiting-replacement' | 'completed' | 'blocked' | 'closed' | 'failed';

export interface IncidentEnding {
  state: IncidentOutcome;
  detailType: EndingDetailType;
  outcome: EndingOutcome;
  exitCode: number;
  phase: EndingPhase;
  /** Counted once per ending; with `metricByReason`, once more with the reason as a dimension. */
  metric: string;
  metricByReason: boolean;
  /** One line: what this ending means. */
  meaning: string;
  /** What the request's status says in place of the decision's own words. */
  requestMessage?: string;
  /** Set when the incident ends but its request does not. */
  requestGoesOn?: RequestGoesOn;
  /** Set when the incident removed its member and asked for its machine: a later report of it comes late. */
  machineAskedFor?: true;
}

/** How one reason ends its state differently. */
type ByReason = Partial<Pick<IncidentEnding, 'exitCode' | 'phase' | 'meaning' | 'requestGoesOn'>>;

/** The codes a close carries: each must say the phase a request shows for it. */
type CloseReason = { [K in ReasonCode]: 'close' extends (typeof reasonTable)[K]['outcomes'][number] ? K : never }[ReasonCode];

interface Row extends Omit<IncidentEnding, 'state'> {
  byReason?: Partial<Record<ReasonCode, ByReason>>;
}

export const incidentEndings = {
  // The pipeline's work is done, the incident's watch is not: the replacement check moves it on.
  'awaiting-replacement': {
    detailType: 'RemediationCompleted',
    outcome: 'awaiting-replacement',
    exitCode: 6,
    phase: 'AwaitingReplacement',
    metric: 'RemediationCompleted',
    metricByReason: false,
    meaning: 'The member was removed, a new leader stands among the rest, and its machine was asked for: the cluster is short until the replacement joins.',
    requestMessage: 'the member was removed and a new leader stands; waiting for the replacement Machine to join etcd',
    requestGoesOn: 'until-replaced',
    machineAskedFor: true,
  },
  completed: {
    detailType: 'RemediationReplaced',
    outcome: 'completed',
    exitCode: 0,
    phase: 'Completed',
    metric: 'RemediationReplaced',
    metricByReason: false,
    meaning: 'The member was removed and the cluster is back to its size, every member voting, started and answering.',
    requestMessage: 'the member was removed and its replacement joined: the cluster is whole again',
    machineAskedFor: true,
  },
  blocked: {
    detailType: 'RemediationBlocked',
    outcome: 'blocked',
    exitCode: 3,
    phase: 'Blocked',
    metric: 'RemediationBlocked',
    metricByReason: true,
    meaning: 'A safety rule stopped it before anything unsafe was done: a person must act.',
    byReason: {
      // The report named another etcd cluster than the one configured: the input was wrong, not the cluster.
      CLUSTER_MISMATCH: { exitCode: 2, meaning: 'The endpoints answered as another etcd cluster than the one the incident is bound to: the input is wrong.' },
    },
  },
  closed: {
    detailType: 'RemediationClosed',
    outcome: 'closed',
    exitCode: 5,
    phase: 'Completed',
    metric: 'RemediationClosed',
    metricByReason: true,
    meaning: 'Nothing is left for this incident to do and nobody must act: nothing was removed by it.',
    byReason: {
      TARGET_RECOVERED: { phase: 'Recovered', meaning: 'The leader answered again, healthy, inside the grace window: nothing was removed.' },
      REQUEST_WITHDRAWN: { phase: 'Cancelled', meaning: 'The request was withdrawn before any removal began: nothing was removed.' },
      // Neither Recovered (the member was sick) nor Completed (nothing happened to the Machine yet):
      // the request goes on in the incident that holds its member, and ends as that one ends.
      DUPLICATE_INCIDENT: {
        phase: 'Running',
        requestGoesOn: 'in-holder',
        meaning:
          'Another incident holds the same member, or another remediator removed it: this one ends, recorded there, and a request goes on in the incident that holds the member.',
      },
      // Cluster API stopped acting on the Machine: the request waits, and is reported once allowed.
      CLUSTER_PAUSED: {
        phase: 'Pending',
        requestGoesOn: 'when-allowed',
        meaning: 'Cluster API paused the Cluster, its MachineHealthCheck or the Machine before any removal began: nothing was removed.',
      },
      REMEDIATION_NOT_ALLOWED: {
        phase: 'Pending',
        requestGoesOn: 'when-allowed',
        meaning: 'The MachineHealthCheck short-circuited remediation (RemediationAllowed False) before any removal began: nothing was removed.',
      },
      COMPETING_REMEDIATION: {
        phase: 'Pending',
        requestGoesOn: 'when-allowed',
        meaning: 'Another MachineHealthCheck hands the same Machine to KCP (or another remediator) before any removal began: nothing was removed.',
      },
    } satisfies Record<CloseReason, ByReason>,
  },
  failed: {
    detailType: 'RemediationFailed',
    outcome: 'failed',
    exitCode: 4,
    phase: 'Failed',
    metric: 'RemediationFailed',
    metricByReason: false,
    meaning: 'The member is out of etcd, but a later step failed for good: a person must finish by hand.',
  },
} as const satisfies Record<IncidentOutcome, Row>;

export type TerminalDetailType = (typeof incidentEndings)[IncidentOutcome]['detailType'];

export const endingStates = Object.keys(incidentEndings) as IncidentOutcome[];

export const endingDetailTypes: readonly EndingDetailType[] = endingStates.map((s) => incidentEndings[s].detailType);

/** The ending of a state, as its reason ends it. */
export function endingOf(state: IncidentOutcome, reason?: string): IncidentEnding {
  const { byReason, ...row }: Row = incidentEndings[state];
  const variant = reason === undefined ? undefined : byReason?.[reason as ReasonCode];
  return { state, ...row, ...variant };
}

const stateOf = (find: (row: Row) => boolean): IncidentOutcome => {
  const state = endingStates.find((s) => find(incidentEndings[s]));
  if (!state) throw new Error('no such ending in the table');
  return state;
};

/** The ending an event says. */
export const endingOfEvent = (detailType: EndingDetailType, reason?: string): IncidentEnding =>
  endingOf(
    stateOf((row) => row.detailType === detailType),
    reason,
  );

/** The ending a CLI outcome word stands for. */
export const endingOfOutcome = (outcome: EndingOutcome, reason?: string): IncidentEnding =>
  endingOf(
    stateOf((row) => row.outcome === outcome),
    reason,
  );

/** The incident removed its member and asked for its machine (awaiting its replacement, or replaced). */
export const askedForMachine = (state: IncidentState): boolean => state !== 'open' && (incidentEndings[state] as Row).machineAskedFor === true;

export const isEndingDetailType = (value: string): value is EndingDetailType => (endingDetailTypes as readonly string[]).includes(value);

/** Every ending, reasons included: a state's own row, then its reasons' variants. */
const everyEnding = (): IncidentEnding[] =>
  endingStates.flatMap((s) => [endingOf(s), ...Object.keys((incidentEndings[s] as Row).byReason ?? {}).map((reason) => endingOf(s, reason))]);

/** Every phase an ending may write, reasons included. */
export const endingPhases: readonly EndingPhase[] = [...new Set(everyEnding().map((e) => e.phase))];

/** The phases that end a request: those of the endings a request does not go on after. */
export const requestEndPhases: readonly EndingPhase[] = [...new Set(everyEnding().flatMap((e) => (e.requestGoesOn ? [] : [e.phase])))];

/** How a state looks to a person: the report's badge and the status table's order read this. */
export type StateTone = 'open' | 'done' | 'neutral' | 'bad';

export interface StateReading {
  /** The word a person reads: the state, or for a close how it closed (recovered, withdrawn). */
  word: string;
  tone: StateTone;
  /** How soon it needs a person: 0 first (blocked, failed), then open, then awaiting its replacement, then ended. */
  attention: number;
  /** Whether the member was removed (and its machine asked for) by this incident. */
  removed: boolean;
}

const READINGS: Record<IncidentState, Omit<StateReading, 'word'>> = {
  open: { tone: 'open', attention: 1, removed: false },
  'awaiting-replacement': { tone: 'done', attention: 2, removed: true },
  completed: { tone: 'done', attention: 3, removed: true },
  closed: { tone: 'neutral', attention: 3, removed: false },
  blocked: { tone: 'bad', attention: 0, removed: false },
  failed: { tone: 'bad', attention: 0, removed: false },
};

/** A close whose reason says more than "closed", and how it reads. */
const CLOSES: Partial<Record<ReasonCode, Pick<StateReading, 'word' | 'tone'>>> = {
  TARGET_RECOVERED: { word: 'recovered', tone: 'done' },
  REQUEST_WITHDRAWN: { word: 'withdrawn', tone: 'neutral' },
};

/** THE reading of a state, at every edge (report, status, Events): none keeps a list of its own. */
export function stateReading(state: IncidentState, reason?: string): StateReading {
  const close = state === 'closed' && reason !== undefined && Object.hasOwn(CLOSES, reason) ? CLOSES[reason as ReasonCode] : undefined;
  // A state no build of ours writes (a store edited by hand) reads as ended, neither good nor bad.
  const reading = Object.hasOwn(READINGS, state) ? READINGS[state] : { tone: 'neutral' as const, attention: 3, removed: false };
  return { word: state, ...reading, ...close };
}
