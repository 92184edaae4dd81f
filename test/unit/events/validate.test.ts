import { describe, expect, it } from 'vitest';
import { TEXT_LIMITS, VIEW_LIMITS } from '../../../functions/core/common/view-limits.ts';
import { parseEnvelope, parseEvent } from '../../../events/validate.ts';
import { incidentIdOf, EVENT_SOURCE } from '../../../events/catalogue.ts';
import { loadSample } from './samples.ts';

const unhealthy = loadSample('MemberUnhealthy');
const probed = loadSample('MembersProbed');
const without = <T extends object>(obj: T, key: keyof T): Partial<T> => {
  const copy = { ...obj };
  delete copy[key];
  return copy;
};

interface InvalidCase {
  name: string;
  detailType: string;
  detail: unknown;
  /** The issue path that must be reported. */
  path: string;
  /** Words the problem must contain. */
  problem: RegExp;
}

const invalid: InvalidCase[] = [
  {
    name: 'missing clusterId',
    detailType: 'MemberUnhealthy',
    detail: without(unhealthy, 'clusterId'),
    path: 'clusterId',
    problem: /required/,
  },
  {
    name: 'empty clusterId',
    detailType: 'RetryDue',
    detail: { ...loadSample('RetryDue'), clusterId: '  ' },
    path: 'clusterId',
    problem: /empty/,
  },
  {
    name: 'two targets',
    detailType: 'MemberUnhealthy',
    detail: { ...unhealthy, target: { memberName: 'cp-a', nodeName: 'node-a' } },
    path: 'target',
    problem: /2 ways \(memberName, nodeName\).*exactly one/,
  },
  {
    name: 'no target fields',
    detailType: 'MemberUnhealthy',
    detail: { ...unhealthy, target: {} },
    path: 'target',
    problem: /no member.*exactly one of memberName, memberId, nodeName, machineName, instanceId/,
  },
  {
    name: 'target missing altogether',
    detailType: 'MemberUnhealthy',
    detail: without(unhealthy, 'target'),
    path: 'target',
    problem: /required/,
  },
  {
    name: 'misspelt target field',
    detailType: 'MemberUnhealthy',
    detail: { ...unhealthy, target: { memberName: 'cp-a', nodname: 'node-a' } },
    path: 'target.nodname',
    problem: /not a known field/,
  },
  {
    name: 'member id that is not hex',
    detailType: 'MemberUnhealthy',
    detail: { ...unhealthy, target: { memberId: 'xyz' } },
    path: 'target.memberId',
    problem: /hex/,
  },
  {
    name: 'bad ISO time',
    detailType: 'MemberUnhealthy',
    detail: { ...unhealthy, observedAt: '2025-06-01 12:00' },
    path: 'observedAt',
    problem: /ISO-8601/,
  },
  {
    name: 'ISO time without a zone',
    detailType: 'RetryRequested',
    detail: { ...loadSample('RetryRequested'), retryAt: '2025-06-01T12:00:00' },
    path: 'retryAt',
    problem: /ISO-8601/,
  },
  {
    name: 'negative attempt',
    detailType: 'RetryDue',
    detail: { ...loadSample('RetryDue'), attempt: -1 },
    path: 'attempt',
    problem: /≥ 0/,
  },
  {
    name: 'fractional attempt',
    detailType: 'LeaderMoved',
    detail: { ...loadSample('LeaderMoved'), attempt: 1.5 },
    path: 'attempt',
    problem: /integer/,
  },
  {
    name: 'unknown reason code',
    detailType: 'RetryRequested',
    detail: { ...loadSample('RetryRequested'), reason: 'BECAUSE' },
    path: 'reason',
    problem: /"BECAUSE" is not a known reason code/,
  },
  {
    name: 'bad member id deep in the view',
    detailType: 'MembersProbed',
    detail: { ...probed, view: { ...probed.view, members: [{ ...probed.view.members[0], id: '0042' }] } },
    path: 'view.members[0].id',
    problem: /leading zeros/,
  },
  {
    name: 'more members than a view holds',
    detailType: 'MembersProbed',
    detail: { ...probed, view: { ...probed.view, members: Array.from({ length: VIEW_LIMITS.members + 1 }, () => probed.view.members[0]) } },
    path: 'view.members',
    problem: new RegExp(`<=${VIEW_LIMITS.members}`),
  },
  {
    name: 'a failure message past its limit, in bytes: 200 three-byte characters',
    detailType: 'MembersProbed',
    detail: {
      ...probed,
      view: {
        ...probed.view,
        members: [{ ...probed.view.members[0], paths: [{ ...probed.view.members[0]!.paths[0], failure: { kind: 'timeout', message: '€'.repeat(200) } }] }],
      },
    },
    path: 'view.members[0].paths[0].failure.message',
    problem: new RegExp(`at most ${TEXT_LIMITS.message} bytes`),
  },
  {
    name: 'unknown detail type',
    detailType: 'MemberSad',
    detail: unhealthy,
    path: 'detailType',
    problem: /"MemberSad" is not a known detail type.*MemberUnhealthy/,
  },
];

describe('parseEvent rejects', () => {
  it.each(invalid)('$name', ({ detailType, detail, path, problem }) => {
    const result = parseEvent(detailType, detail);
    if (result.ok) throw new Error(`expected ${path} to be rejected`);
    const issue = result.error.issues.find((i) => i.path === path);
    expect(issue, JSON.stringify(result.error.issues)).toBeDefined();
    expect(issue?.problem).toMatch(problem);
    expect(result.error.detailType).toBe(detailType);
    // The one-line summary names the field and the problem, so a log line alone is enough.
    expect(result.error.summary).toContain(`${path}: ${issue?.problem}`);
    expect(result.error.summary).not.toContain('\n');
  });

  it('reports every bad field at once', () => {
    const result = parseEvent('MemberUnhealthy', { ...without(unhealthy, 'clusterId'), attempt: -2 });
    expect(result.ok ? [] : result.error.issues.map((i) => i.path).sort()).toEqual(['attempt', 'clusterId']);
  });
});

describe('parseEvent accepts', () => {
  it('applies defaults and assigns nothing it should not', () => {
    const result = parseEvent('MemberUnhealthy', without(unhealthy, 'attempt'));
    if (!result.ok) throw new Error(result.error.summary);
    expect(result.event).toMatchObject({ source: EVENT_SOURCE, detailType: 'MemberUnhealthy' });
    expect(result.event.detail).toMatchObject({ attempt: 0, clusterId: unhealthy.clusterId });
    expect(incidentIdOf(result.event)).toBeUndefined();
  });

  it('normalizes a member id selector to lowercase', () => {
    const result = parseEvent('MemberUnhealthy', { ...unhealthy, target: { memberId: ' 8E9E05C52164694D ' } });
    expect(result.ok && result.event.detailType === 'MemberUnhealthy' && result.event.detail.target).toEqual({
      memberId: '8e9e05c52164694d',
    });
  });

  it('accepts timestamps with an offset', () => {
    expect(parseEvent('RetryDue', { ...loadSample('RetryDue'), at: '2025-06-01T14:00:00+02:00' }).ok).toBe(true);
  });
});

describe('the exec relay under any name but exec-relay', () => {
  it('a view whose relay path is named `exec` is refused, naming the field and the names there are', () => {
    const relay = { path: 'exec', endpoint: 'https://10.0.0.11:2379 via kube-system/etcd-cp-2', reachability: 'ok', latencyMs: 40 };
    const [first, ...rest] = probed.view.members;
    const view = { ...probed.view, members: [{ ...first!, paths: [...first!.paths, relay] }, ...rest] };
    const result = parseEvent('MembersProbed', { ...probed, view });
    if (result.ok) throw new Error('expected view.members.0.paths to be refused');
    expect(result.error.summary).toContain(`view.members[0].paths[${first!.paths.length}].path: must be one of "direct", "port-forward", "exec-relay"`);
  });

  it('LeaderMoved over `exec` is refused at path', () => {
    const result = parseEvent('LeaderMoved', { ...loadSample('LeaderMoved'), path: 'exec' });
    expect(result.ok ? [] : result.error.issues.map((i) => [i.path, i.problem])).toEqual([['path', 'must be one of "direct", "port-forward", "exec-relay"']]);
  });
});

describe('parseEnvelope', () => {
  it.each([
    ['wrong source', { source: 'other', detailType: 'RetryDue', detail: loadSample('RetryDue') }, 'source'],
    ['no detail type', { source: EVENT_SOURCE, detail: {} }, 'detailType'],
    ['not an object', 'hello', 'source'],
  ])('rejects %s', (_name, envelope, path) => {
    const result = parseEnvelope(envelope);
    expect(result.ok ? [] : result.error.issues.map((i) => i.path)).toEqual([path]);
  });

  it('accepts a well-formed envelope', () => {
    const result = parseEnvelope({ source: EVENT_SOURCE, detailType: 'RetryDue', detail: loadSample('RetryDue') });
    expect(result.ok).toBe(true);
  });
});
