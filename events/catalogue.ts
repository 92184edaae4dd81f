// The one catalogue of events: detail types, their schemas, and which function each is routed to.
// CDK rules, the local bus and the tests all read this file.
import type { z } from 'zod';
import { endingDetailTypes, type TerminalDetailType } from '../functions/core/incident/index.ts';
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

/** Detail type → the functions it triggers. Outcomes and informational events route nowhere. */
export const routes = {
  MemberUnhealthy: ['probe-members'],
  RetryDue: ['probe-members'],
  MembersProbed: ['move-leader'],
  RetryRequested: ['schedule-retry'],
  RemediationApproved: ['remediate'],
  LeaderMoved: [],
  RemediationBlocked: [],
  RemediationClosed: [],
  RemediationFailed: [],
  RemediationCompleted: [],
  RemediationReplaced: [],
  ReplacementOverdue: [],
  LearnerRemoved: [],
  // The periodic learner check of one cluster, asked for by probe-members' scheduled round.
  LearnerCheckDue: ['probe-members'],
  // Leader hygiene: a round asks for each cluster's check; a degraded leader goes to the move path.
  HygieneCheckDue: ['probe-members'],
  LeaderDegraded: ['move-leader'],
  HygieneMoveEnded: [],
  LeaderHygieneAlert: [],
} as const satisfies Record<DetailType, readonly FunctionName[]>;

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
  'move-leader': ['RemediationApproved', 'RetryRequested', 'RemediationBlocked', 'RemediationClosed', 'LeaderMoved', 'LearnerRemoved', 'HygieneMoveEnded'],
  'schedule-retry': ['RetryDue'],
  remediate: ['RemediationCompleted', 'RemediationFailed', 'RetryRequested', 'RemediationBlocked', 'RemediationClosed'],
} as const satisfies Record<FunctionName, readonly DetailType[]>;

/** The detail types routed to function F, as a type. */
export type DetailTypesFor<F extends FunctionName> = {
  [K in DetailType]: F extends (typeof routes)[K][number] ? K : never;
}[DetailType];

export const routesOf = (detailType: DetailType): readonly FunctionName[] => routes[detailType];

/** The detail types a function subscribes to: what a CDK rule for it matches on. */
export const subscriptionsOf = <F extends FunctionName>(fn: F): DetailTypesFor<F>[] =>
  detailTypes.filter((t) => (routes[t] as readonly FunctionName[]).includes(fn)) as DetailTypesFor<F>[];
