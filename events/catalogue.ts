// The one catalogue of events: detail types, their schemas, and the one router: which piece of
// work each event is for and which function hosts it. CDK rules, the local bus, the handlers and
// the tests all read this file.
import type { z } from 'zod';
import { endingDetailTypes, type TerminalDetailType } from '../functions/core/incident/index.ts';
import { REPLACEMENT_CHECK_REASONS } from '../functions/core/replacement/index.ts';
import { leaderMovedSchema } from './schemas/leader-moved.ts';
import { memberUnhealthySchema } from './schemas/member-unhealthy.ts';
import { membersProbedSchema } from './schemas/members-probed.ts';
import {
  remediationApprovedSchema,
  remediationBlockedSchema,
  remediationClosedSchema,
  remediationCompletedSchema,
  remediationFailedSchema,
} from './schemas/remediation.ts';
import { hygieneCheckDueSchema, hygieneMoveEndedSchema, leaderDegradedSchema, leaderHygieneAlertSchema } from './schemas/hygiene.ts';
import { learnerCheckDueSchema } from './schemas/learner-check.ts';
import { maintenanceDueSchema, maintenanceEndedSchema } from './schemas/maintenance.ts';
import { learnerRemovedSchema, remediationReplacedSchema, replacementOverdueSchema } from './schemas/replacement.ts';
import { retryDueSchema, retryRequestedSchema } from './schemas/retry.ts';

export const EVENT_SOURCE = 'etcd-remediator';

export const detailTypes = [
  'MemberUnhealthy',
  'RetryDue',
  'MembersProbed',
  'LeaderMoved',
  'RetryRequested',
  'RemediationApproved',
  'RemediationBlocked',
  'RemediationClosed',
  'RemediationFailed',
  'RemediationCompleted',
  'RemediationReplaced',
  'ReplacementOverdue',
  'LearnerRemoved',
  'LearnerCheckDue',
  'HygieneCheckDue',
  'LeaderDegraded',
  'HygieneMoveEnded',
  'LeaderHygieneAlert',
  'MaintenanceDue',
  'MaintenanceEnded',
] as const;

export type DetailType = (typeof detailTypes)[number];

export const detailSchemas = {
  MemberUnhealthy: memberUnhealthySchema,
  RetryDue: retryDueSchema,
  MembersProbed: membersProbedSchema,
  LeaderMoved: leaderMovedSchema,
  RetryRequested: retryRequestedSchema,
  RemediationApproved: remediationApprovedSchema,
  RemediationBlocked: remediationBlockedSchema,
  RemediationClosed: remediationClosedSchema,
  RemediationFailed: remediationFailedSchema,
  RemediationCompleted: remediationCompletedSchema,
  RemediationReplaced: remediationReplacedSchema,
  ReplacementOverdue: replacementOverdueSchema,
  LearnerRemoved: learnerRemovedSchema,
  LearnerCheckDue: learnerCheckDueSchema,
  HygieneCheckDue: hygieneCheckDueSchema,
  LeaderDegraded: leaderDegradedSchema,
  HygieneMoveEnded: hygieneMoveEndedSchema,
  LeaderHygieneAlert: leaderHygieneAlertSchema,
  MaintenanceDue: maintenanceDueSchema,
  MaintenanceEnded: maintenanceEndedSchema,
} as const satisfies Record<DetailType, z.ZodType>;

/** A detail after parsing (defaults applied). */
export type DetailOf<T extends DetailType> = z.output<(typeof detailSchemas)[T]>;
/** A detail as a producer may write it (defaulted fields optional). */
export type DetailInputOf<T extends DetailType> = z.input<(typeof detailSchemas)[T]>;

/** One event on the bus; a union over detail types, so `detailType` narrows `detail`. */
export type EventEnvelope<T extends DetailType = DetailType> = {
  [K in T]: { source: typeof EVENT_SOURCE; detailType: K; detail: DetailOf<K> };
}[T];

export const makeEvent = <T extends DetailType>(detailType: T, detail: DetailOf<T>): EventEnvelope<T> => ({ source: EVENT_SOURCE, detailType, detail });

/** The incident an event speaks of: none for a report not yet joined, nor for the periodic checks' events (learners, leader hygiene). */
export const incidentIdOf = (event: EventEnvelope): string | undefined => ('incidentId' in event.detail ? event.detail.incidentId : undefined);

export const isDetailType = (value: unknown): value is DetailType => typeof value === 'string' && (detailTypes as readonly string[]).includes(value);

export const functionNames = ['probe-members', 'move-leader', 'schedule-retry', 'remediate'] as const;
export type FunctionName = (typeof functionNames)[number];

/**
 * The one router: each piece of work, named for what it does, with the detail type it takes and
 * the function that hosts it. A function hosts several works where they reach the same systems, so
 * they share its cold start, its role and its clients (probe-members reaches etcd for all five of
 * its works). Two works of one detail type are told apart by `when`, a detail field and the values
 * that send an event there; the other takes the rest. The bus (in process, or EventBridge's rules
 * generated from `routes`) delivers an event to its work's host, and the host runs the work
 * `workOf` names: no function routes a second time.
 */
export const works = {
  'open-incident': { takes: 'MemberUnhealthy', hostedBy: 'probe-members' },
  'probe-again': { takes: 'RetryDue', hostedBy: 'probe-members' },
  'check-replacement': { takes: 'RetryDue', when: { field: 'reason', in: REPLACEMENT_CHECK_REASONS }, hostedBy: 'probe-members' },
  'check-learners': { takes: 'LearnerCheckDue', hostedBy: 'probe-members' },
  'check-hygiene': { takes: 'HygieneCheckDue', hostedBy: 'probe-members' },
  'move-leader': { takes: 'MembersProbed', hostedBy: 'move-leader' },
  'move-degraded-leader': { takes: 'LeaderDegraded', hostedBy: 'move-leader' },
  'schedule-retry': { takes: 'RetryRequested', hostedBy: 'schedule-retry' },
  remediate: { takes: 'RemediationApproved', hostedBy: 'remediate' },
  // A defragmentation may take minutes: hosted where the longest step already runs.
  maintain: { takes: 'MaintenanceDue', hostedBy: 'remediate' },
} as const satisfies Record<string, Work>;

interface Work {
  takes: DetailType;
  hostedBy: FunctionName;
  when?: { field: string; in: readonly string[] };
}
export type WorkName = keyof typeof works;
const workTable: Readonly<Record<WorkName, Work>> = works;
export const workNames = Object.keys(works) as WorkName[];

/** The works function F hosts, as a type. */
export type WorksOf<F extends FunctionName> = { [W in WorkName]: (typeof works)[W]['hostedBy'] extends F ? W : never }[WorkName];

/** The detail a work takes. */
export type DetailOfWork<W extends WorkName> = DetailOf<(typeof works)[W]['takes']>;

/** The detail types routed to function F, as a type. */
export type DetailTypesFor<F extends FunctionName> = (typeof works)[WorksOf<F>]['takes'];

const matches = (when: NonNullable<Work['when']>, detail: object): boolean => when.in.includes(String((detail as Record<string, unknown>)[when.field]));

/** The work an event is for: the one whose `when` it matches, else the one of its type with none. */
export function workOf(event: EventEnvelope): WorkName | undefined {
  const candidates = workNames.filter((w) => workTable[w].takes === event.detailType);
  return candidates.find((w) => workTable[w].when && matches(workTable[w].when, event.detail)) ?? candidates.find((w) => !workTable[w].when);
}

/** Detail type → the functions it triggers, from the works. Outcomes and informational events route nowhere. */
export const routes = Object.fromEntries(
  detailTypes.map((t) => [t, [...new Set(workNames.filter((w) => workTable[w].takes === t).map((w) => workTable[w].hostedBy))]]),
) as unknown as Readonly<Record<DetailType, readonly FunctionName[]>>;

/**
 * An incident's outcomes: each ends it, and nobody acts on it. The endings table's events (core
 * incident-endings.ts), not inferred from the routes, so a forgotten route is a test failure, not
 * a silent sink.
 */
export const terminalDetailTypes: readonly TerminalDetailType[] = endingDetailTypes satisfies readonly DetailType[];

export type { TerminalDetailType } from '../functions/core/incident/index.ts';

/** Said for the record (progress, timelines): routes nowhere and ends nothing. */
export const informationalDetailTypes = [
  'LeaderMoved',
  'ReplacementOverdue',
  'LearnerRemoved',
  'HygieneMoveEnded',
  'LeaderHygieneAlert',
  'MaintenanceEnded',
] as const satisfies readonly DetailType[];

export const isTerminalEvent = (event: EventEnvelope): event is EventEnvelope<TerminalDetailType> =>
  (terminalDetailTypes as readonly DetailType[]).includes(event.detailType);

/**
 * Function → the detail types it may publish. RetryDue is published on schedule-retry's behalf by
 * the scheduler; MemberUnhealthy comes from outside (adapters, CLI).
 */
export const emits = {
  // The replacement check runs in probe-members, on the RetryDue an awaiting-replacement incident is owed.
  // Its scheduled round of the learner check asks for each registered cluster's (LearnerCheckDue).
  // Its leader-hygiene check asks for a move (LeaderDegraded) or alerts, and its round asks for each cluster's check.
  'probe-members': [
    'MembersProbed',
    'RemediationBlocked',
    'RemediationClosed',
    'RemediationReplaced',
    'ReplacementOverdue',
    'LearnerRemoved',
    'LearnerCheckDue',
    'HygieneCheckDue',
    'LeaderDegraded',
    'LeaderHygieneAlert',
  ],
  // A retry held by a NOSPACE alarm asks for the maintenance that clears it (MaintenanceDue).
  'move-leader': [
    'RemediationApproved',
    'RetryRequested',
    'RemediationBlocked',
    'RemediationClosed',
    'LeaderMoved',
    'LearnerRemoved',
    'HygieneMoveEnded',
    'MaintenanceDue',
  ],
  'schedule-retry': ['RetryDue'],
  // Maintenance asks for its next step, and says its end.
  remediate: ['RemediationCompleted', 'RemediationFailed', 'RetryRequested', 'RemediationBlocked', 'RemediationClosed', 'MaintenanceDue', 'MaintenanceEnded'],
} as const satisfies Record<FunctionName, readonly DetailType[]>;

export const routesOf = (detailType: DetailType): readonly FunctionName[] => routes[detailType];

/** The detail types a function subscribes to: what a CDK rule for it matches on. */
export const subscriptionsOf = <F extends FunctionName>(fn: F): DetailTypesFor<F>[] => detailTypes.filter((t) => routes[t].includes(fn)) as DetailTypesFor<F>[];
