import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  detailSchemas,
  detailTypes,
  emits,
  functionNames,
  informationalDetailTypes,
  isTerminalEvent,
  makeEvent,
  routes,
  subscriptionsOf,
  terminalDetailTypes,
  type DetailOf,
  type DetailType,
  type FunctionName,
  type WorksOf,
  workNames,
  workOf,
  works,
} from '../../../events/catalogue.ts';
import { REPLACEMENT_CHECK_REASONS } from '../../../functions/core/replacement/index.ts';
import type { probeMembersWorks } from '../../../functions/probe-members/handler.ts';
import { parseEvent } from '../../../events/validate.ts';
import { loadSample, sampleFiles } from './samples.ts';

describe('samples', () => {
  it('has exactly one sample per detail type and nothing else', () => {
    expect(sampleFiles().sort()).toEqual(detailTypes.map((t) => `${t}.json`).sort());
  });

  it.each(detailTypes)('%s sample parses against its schema', (detailType) => {
    const result = parseEvent(detailType, loadSample(detailType));
    expect(result.ok ? 'ok' : result.error.summary).toBe('ok');
  });

  it.each(detailTypes)('%s sample is not accepted by every other schema (schemas are distinct)', (detailType) => {
    const acceptedBy = detailTypes.filter((other) => detailSchemas[other].safeParse(loadSample(detailType)).success);
    expect(acceptedBy).toContain(detailType);
    expect(acceptedBy.length).toBeLessThan(detailTypes.length);
  });
});

describe('routing table', () => {
  // The flow, arrow by arrow, as the design draws it.
  const flow: [DetailType, FunctionName[]][] = [
    ['MemberUnhealthy', ['probe-members']],
    ['RetryDue', ['probe-members']],
    ['MembersProbed', ['move-leader']],
    ['RetryRequested', ['schedule-retry']],
    ['RemediationApproved', ['remediate']],
    ['LeaderMoved', []],
    ['RemediationBlocked', []],
    ['RemediationFailed', []],
    ['RemediationCompleted', []],
    // Leader hygiene: a round asks each cluster's check of probe-members, which asks move-leader to move a degraded leader.
    ['HygieneCheckDue', ['probe-members']],
    ['LeaderDegraded', ['move-leader']],
    ['HygieneMoveEnded', []],
    ['LeaderHygieneAlert', []],
  ];

  it.each(flow)('%s routes to %j', (detailType, functions) => {
    expect(routes[detailType]).toEqual(functions);
  });

  it('has an entry for every detail type and no other', () => {
    expect(Object.keys(routes).sort()).toEqual([...detailTypes].sort());
  });

  const isTerminal = (t: DetailType) => (terminalDetailTypes as readonly DetailType[]).includes(t);
  const isInformational = (t: DetailType) => (informationalDetailTypes as readonly DetailType[]).includes(t);

  it.each(detailTypes)('%s either routes somewhere or is declared terminal or informational, never both', (detailType) => {
    const sink = isTerminal(detailType) || isInformational(detailType);
    expect(routes[detailType].length > 0).toBe(!sink);
  });

  it.each(detailTypes)('%s is not declared both terminal and informational', (detailType) => {
    expect(isTerminal(detailType) && isInformational(detailType)).toBe(false);
  });

  it("the terminal detail types are the five outcomes, and LeaderMoved, ReplacementOverdue, LearnerRemoved, leader hygiene's and maintenance's sayings end nothing", () => {
    expect([...terminalDetailTypes].sort()).toEqual([
      'RemediationBlocked',
      'RemediationClosed',
      'RemediationCompleted',
      'RemediationFailed',
      'RemediationReplaced',
    ]);
    expect(informationalDetailTypes).toEqual([
      'LeaderMoved',
      'ReplacementOverdue',
      'LearnerRemoved',
      'HygieneMoveEnded',
      'LeaderHygieneAlert',
      'MaintenanceEnded',
    ]);
  });

  it.each(detailTypes)('isTerminalEvent reads the one list for %s', (detailType) => {
    expect(isTerminalEvent(makeEvent(detailType, loadSample(detailType) as DetailOf<typeof detailType>))).toBe(isTerminal(detailType));
  });

  it.each(functionNames)('%s is triggered by something and emits something', (fn) => {
    expect(subscriptionsOf(fn).length).toBeGreaterThan(0);
    expect(emits[fn].length).toBeGreaterThan(0);
  });

  it('every event except the outside input is emitted by some function', () => {
    const emitted = new Set<DetailType>(Object.values(emits).flat());
    expect(detailTypes.filter((t) => !emitted.has(t))).toEqual(['MemberUnhealthy']);
  });

  it('every terminal outcome is reachable from MemberUnhealthy', () => {
    const seen = new Set<DetailType>(['MemberUnhealthy']);
    const queue: DetailType[] = ['MemberUnhealthy'];
    for (let t = queue.shift(); t; t = queue.shift()) {
      for (const fn of routes[t]) {
        for (const next of emits[fn]) {
          if (seen.has(next)) continue;
          seen.add(next);
          queue.push(next);
        }
      }
    }
    expect([...seen].sort()).toEqual([...detailTypes].sort());
  });

  it('subscriptionsOf inverts the table', () => {
    expect(subscriptionsOf('probe-members')).toEqual(['MemberUnhealthy', 'RetryDue', 'LearnerCheckDue', 'HygieneCheckDue']);
    expect(subscriptionsOf('move-leader')).toEqual(['MembersProbed', 'LeaderDegraded']);
    expect(subscriptionsOf('remediate')).toEqual(['RemediationApproved', 'MaintenanceDue']);
  });
});

describe('types', () => {
  it('DetailOf narrows to the schema output', () => {
    expectTypeOf<DetailOf<'MemberUnhealthy'>['attempt']>().toEqualTypeOf<number>();
    expectTypeOf<DetailOf<'MemberUnhealthy'>['incidentId']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<DetailOf<'MembersProbed'>['incidentId']>().toEqualTypeOf<string>();
    expectTypeOf<DetailOf<'RetryRequested'>['from']>().toEqualTypeOf<'move-leader' | 'remediate'>();
  });
});

describe('the one router: works', () => {
  const retryDue = (reason: string) => makeEvent('RetryDue', { ...loadSample('RetryDue'), reason } as DetailOf<'RetryDue'>);

  it('routes every routed detail type to exactly one work without a condition, so no event goes nowhere', () => {
    for (const detailType of detailTypes.filter((t) => routes[t].length > 0)) {
      const unconditional = workNames.filter((w) => works[w].takes === detailType && !('when' in works[w]));
      expect(unconditional, detailType).toHaveLength(1);
    }
  });

  it('sends a RetryDue for a replacement check to the check, any other to the next probe', () => {
    for (const reason of REPLACEMENT_CHECK_REASONS) expect(workOf(retryDue(reason))).toBe('check-replacement');
    expect(workOf(retryDue('LEADER_MOVED'))).toBe('probe-again');
    expect(workOf(retryDue('STEP_FAILED'))).toBe('probe-again');
  });

  it("names each sample's work, and an outcome's none", () => {
    expect(Object.fromEntries(detailTypes.map((t) => [t, workOf(makeEvent(t, loadSample(t))) ?? null]))).toMatchObject({
      MemberUnhealthy: 'open-incident',
      MembersProbed: 'move-leader',
      LeaderDegraded: 'move-degraded-leader',
      RetryRequested: 'schedule-retry',
      RemediationApproved: 'remediate',
      LearnerCheckDue: 'check-learners',
      HygieneCheckDue: 'check-hygiene',
      RemediationCompleted: null,
      LeaderMoved: null,
    });
  });

  it("derives routes from the works' hosts", () => {
    for (const t of detailTypes)
      expect([...routes[t]].sort(), t).toEqual([...new Set(workNames.filter((w) => works[w].takes === t).map((w) => works[w].hostedBy))].sort());
  });

  it("gives each function's handler a table of exactly its works (a missing or extra work does not compile)", () => {
    expectTypeOf<keyof typeof probeMembersWorks>().toEqualTypeOf<WorksOf<'probe-members'>>();
    expectTypeOf<WorksOf<'move-leader'>>().toEqualTypeOf<'move-leader' | 'move-degraded-leader'>();
  });
});
