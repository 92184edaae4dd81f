// The one table of how an incident ends: a row for every state an incident ends in, every ending
// event of the catalogue in it, a phase for every close, and each edge reading it the same way.
import fs from 'node:fs';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { detailTypes, informationalDetailTypes, routes, terminalDetailTypes } from '../../../../events/catalogue.ts';
import { incidentStates, type IncidentState } from '../../../../functions/core/incident/incident.ts';
import {
  askedForMachine,
  endingDetailTypes,
  endingOf,
  endingOfEvent,
  endingOfOutcome,
  endingPhases,
  endingStates,
  incidentEndings,
  requestEndPhases,
  stateReading,
} from '../../../../functions/core/incident/incident-endings.ts';
import { reasonCodes, reasonRow } from '../../../../functions/core/common/reason-table.ts';
import { EXIT, exitCodeOf } from '../../../../infra/cli/output.ts';

const CRD = path.resolve(import.meta.dirname, '../../../../infra/kubernetes/deploy/crds/etcd-remediator.io_etcdremediationrequests.yaml');

/** The phase enum of the EtcdRemediationRequest CRD, as shipped. */
function crdPhases(): string[] {
  const [crd] = loadAll(fs.readFileSync(CRD, 'utf8')) as {
    spec: { versions: { schema: { openAPIV3Schema: { properties: { status: { properties: { phase: { enum: string[] } } } } } } }[] };
  }[];
  return crd!.spec.versions[0]!.schema.openAPIV3Schema.properties.status.properties.phase.enum;
}

describe('the endings table', () => {
  it('has a row for every state an incident ends in, and none for the open one', () => {
    expect([...endingStates].sort()).toEqual(incidentStates.filter((s) => s !== 'open').sort());
    for (const state of endingStates) expect(endingOf(state).state).toBe(state);
  });

  it('holds every ending event of the catalogue: each detail type that routes nowhere and is no mere information', () => {
    const sinks = detailTypes.filter((t) => routes[t].length === 0 && !(informationalDetailTypes as readonly string[]).includes(t));
    expect([...endingDetailTypes].sort()).toEqual([...sinks].sort());
    expect([...terminalDetailTypes].sort()).toEqual([...sinks].sort());
  });

  it('gives each state its own event, CLI outcome and metric', () => {
    for (const key of ['detailType', 'outcome', 'metric'] as const) {
      expect(new Set(endingStates.map((s) => incidentEndings[s][key])).size, key).toBe(endingStates.length);
    }
  });

  it('says the phase of every reason a close carries', () => {
    const closeReasons = reasonCodes.filter((code) => reasonRow(code).outcomes.includes('close'));
    expect(closeReasons.length).toBeGreaterThan(0);
    for (const reason of closeReasons) expect(Object.keys(incidentEndings.closed.byReason), reason).toContain(reason);
  });

  it('never calls a member another incident holds recovered, nor completed: the request goes on in that one', () => {
    expect(endingOf('closed', 'TARGET_RECOVERED').phase).toBe('Recovered');
    expect(endingOf('closed', 'REQUEST_WITHDRAWN').phase).toBe('Cancelled');
    expect(endingOf('closed', 'DUPLICATE_INCIDENT')).toMatchObject({ phase: 'Running', requestGoesOn: 'in-holder' });
  });

  it('a close because Cluster API stopped acting on the Machine leaves its request Pending, reported once allowed', () => {
    for (const reason of ['CLUSTER_PAUSED', 'REMEDIATION_NOT_ALLOWED'] as const)
      expect(endingOf('closed', reason)).toMatchObject({ phase: 'Pending', requestGoesOn: 'when-allowed', exitCode: 5 });
  });

  it('ends a request only on an ending it does not go on after', () => {
    expect([...requestEndPhases].sort()).toEqual(['Blocked', 'Cancelled', 'Completed', 'Failed', 'Recovered']);
    expect(endingPhases).toEqual(expect.arrayContaining([...requestEndPhases, 'Running', 'Pending']));
  });

  it('writes only phases the EtcdRemediationRequest CRD allows', () => {
    const allowed = crdPhases();
    for (const phase of endingPhases) expect(allowed).toContain(phase);
  });

  it('reads the same from the event, the state and the CLI word', () => {
    for (const state of endingStates) {
      const row = endingOf(state);
      expect(endingOfEvent(row.detailType)).toEqual(row);
      expect(endingOfOutcome(row.outcome)).toEqual(row);
      expect(exitCodeOf(row.outcome)).toBe(row.exitCode);
    }
  });

  it('keeps the README exit codes: 6 awaiting replacement, 0 completed, 3 blocked, 4 failed, 5 closed, 2 for a block on input', () => {
    expect(endingStates.map((s) => [s, endingOf(s).exitCode])).toEqual([
      ['awaiting-replacement', 6],
      ['completed', EXIT.ok],
      ['blocked', 3],
      ['closed', 5],
      ['failed', 4],
    ]);
    expect(exitCodeOf('blocked', 'CLUSTER_MISMATCH')).toBe(EXIT.usage);
    expect(exitCodeOf('closed', 'DUPLICATE_INCIDENT')).toBe(5);
  });

  it('a removal awaits its replacement, with its request followed on until the replacement joins; then it is completed', () => {
    expect(endingOf('awaiting-replacement')).toMatchObject({
      detailType: 'RemediationCompleted',
      phase: 'AwaitingReplacement',
      requestGoesOn: 'until-replaced',
      exitCode: 6,
    });
    expect(endingOf('completed')).toMatchObject({ detailType: 'RemediationReplaced', phase: 'Completed', exitCode: 0 });
    expect(requestEndPhases).not.toContain('AwaitingReplacement');
    expect(incidentStates.filter(askedForMachine)).toEqual(['awaiting-replacement', 'completed']);
  });

  it('says in one line what each ending means', () => {
    for (const state of endingStates) expect(endingOf(state).meaning).toMatch(/^[A-Z][^\n]+\.$/);
  });
});

describe('how a state reads to a person', () => {
  it.each([
    ['blocked', undefined, 'blocked', 'bad', 0],
    ['failed', undefined, 'failed', 'bad', 0],
    ['open', undefined, 'open', 'open', 1],
    ['awaiting-replacement', undefined, 'awaiting-replacement', 'done', 2],
    ['completed', undefined, 'completed', 'done', 3],
    ['closed', 'TARGET_RECOVERED', 'recovered', 'done', 3],
    ['closed', 'REQUEST_WITHDRAWN', 'withdrawn', 'neutral', 3],
    ['closed', 'DUPLICATE_INCIDENT', 'closed', 'neutral', 3],
    ['__proto__', undefined, '__proto__', 'neutral', 3],
  ] as const)('%s (%s) reads %s, %s, attention %d', (state, reason, word, tone, attention) => {
    expect(stateReading(state as IncidentState, reason)).toMatchObject({ word, tone, attention });
  });

  it('a removal is read from the states that removed the member', () => {
    expect(incidentStates.filter((s) => stateReading(s).removed)).toEqual(['awaiting-replacement', 'completed']);
  });
});
