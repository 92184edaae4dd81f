import { describe, expect, it } from 'vitest';
import { matchReport, namesSameMember, type IncidentSummary } from '../../../../functions/core/incident/report-match.ts';

const T = 1_000_000;
const incident = (over: Partial<IncidentSummary>): IncidentSummary => ({
  incidentId: 'i1',
  state: 'open',
  targetKey: 'memberName=etcd-1',
  memberId: '91bc3c398fb3c146',
  memberName: 'etcd-1',
  updatedAt: T,
  ...over,
});
const options = { now: T + 60_000, windowMs: 3_600_000, aliases: { 'node-1': 'etcd-1' } };

describe('namesSameMember', () => {
  it.each([
    ['the same selector', { memberName: 'etcd-1' }, true],
    ['the resolved id, in any case', { memberId: '91BC3C398FB3C146' }, true],
    ['an alias of the resolved name', { nodeName: 'node-1' }, true],
    ['another member', { memberName: 'etcd-2' }, false],
    ['another id', { memberId: 'fd422379fda50e48' }, false],
  ] as const)('%s', (_, selector, same) => {
    expect(namesSameMember(selector, incident({}), options.aliases)).toBe(same);
  });
});

describe('namesSameMember: by the Machine or Node the incident’s views place its member on', () => {
  const onHost = incident({
    targetKey: 'nodeName=cp-1',
    memberName: 'cp-1',
    views: [
      { members: [{ id: '91bc3c398fb3c146', host: { node: 'cp-1', nodeExists: true, machine: { name: 'wl-cp-1-x7k2p', deleting: false } } }] },
      // The newest view no longer lists it (removed): the last one that did says where it ran.
      { members: [{ id: 'fd422379fda50e48', host: { node: 'cp-2', nodeExists: true } }] },
    ],
  });
  it.each([
    ['its Machine', { machineName: 'wl-cp-1-x7k2p' }, true],
    ['its Node, when the report is by Node', { nodeName: 'cp-1' }, true],
    ['another Machine', { machineName: 'wl-cp-2-abcde' }, false],
    ['the Node of another member', { nodeName: 'cp-2' }, false],
  ] as const)('%s', (_, selector, same) => {
    expect(namesSameMember(selector, onHost)).toBe(same);
  });

  it('an incident not resolved to a member names no host', () => {
    expect(namesSameMember({ machineName: 'wl-cp-1-x7k2p' }, { ...onHost, memberId: undefined, memberName: undefined })).toBe(false);
  });
});

describe('matchReport', () => {
  it('joins the open incident of the same member, whatever name the report uses', () => {
    expect(matchReport({ target: { memberId: '91bc3c398fb3c146' }, observedAt: T }, [incident({})], options)).toEqual({ kind: 'open', incidentId: 'i1' });
  });

  it('a report of the Machine the open incident’s member runs on joins it', () => {
    const byNode = incident({
      targetKey: 'nodeName=cp-1',
      views: [{ members: [{ id: '91bc3c398fb3c146', host: { node: 'cp-1', nodeExists: true, machine: { name: 'wl-cp-1', deleting: false } } }] }],
    });
    expect(matchReport({ target: { machineName: 'wl-cp-1' }, observedAt: T }, [byNode], options)).toEqual({ kind: 'open', incidentId: 'i1' });
  });

  it('a report observed before the remediation ended is a late duplicate of it, within the window', () => {
    const done = incident({ state: 'awaiting-replacement', updatedAt: T });
    expect(matchReport({ target: { memberName: 'etcd-1' }, observedAt: T - 1 }, [done], options)).toEqual({ kind: 'late', incidentId: 'i1' });
    // Observed after it ended: a new problem, a new incident (KCP's retry limits then apply).
    expect(matchReport({ target: { memberName: 'etcd-1' }, observedAt: T + 1 }, [done], options)).toBeUndefined();
    // Past the window: a new incident too.
    expect(matchReport({ target: { memberName: 'etcd-1' }, observedAt: T - 1 }, [done], { ...options, now: T + 3_600_001 })).toBeUndefined();
    // Only a remediation ends one: a blocked incident is reported afresh.
    expect(matchReport({ target: { memberName: 'etcd-1' }, observedAt: T - 1 }, [incident({ state: 'blocked' })], options)).toBeUndefined();
  });
});
