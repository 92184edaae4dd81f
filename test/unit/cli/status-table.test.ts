// The status table as a person reads it: what needs a person first, ages and next steps in short
// words, columns aligned, and cut with … to the terminal's width rather than wrapped.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../functions/core/common/decision.ts';
import type { HygieneMoveRecord } from '../../../functions/core/hygiene/hygiene-record.ts';
import { formatAge } from '../../../infra/cli/duration.ts';
import { formatDue, renderStatusTable, statusChangeKey, type ClusterHygiene, type StatusEntry, type StatusIncident } from '../../../infra/cli/status-table.ts';
import { fitHeight } from '../../../infra/cli/status-watch.ts';

const NOW = Date.parse('2026-12-04T02:00:00Z');
const SEC = 1_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;

const retry = (reason: Decision['reason'], at: number, evidence: Record<string, unknown> = {}): Decision => ({
  kind: 'retry',
  reason,
  at,
  reprobeNow: false,
  message: 'waits',
  evidence,
});
const block = (reason: Decision['reason']): Decision => ({ kind: 'block', reason, message: 'blocked', evidence: {} });

let serial = 0;
function entry(over: Partial<StatusIncident> & { nextDueAt?: number; replacementSaid?: StatusEntry['replacementSaid'] } = {}): StatusEntry {
  const { nextDueAt, replacementSaid, ...incident } = over;
  serial += 1;
  return {
    incident: {
      incidentId: `${String(serial).padStart(8, '0')}-aaaa-bbbb-cccc-dddddddddddd`,
      clusterId: 'prod',
      target: { memberName: `etcd-${serial}` },
      state: 'open',
      openedAt: NOW - MIN,
      updatedAt: NOW - MIN,
      attempt: 1,
      ...incident,
    },
    ...(nextDueAt === undefined ? {} : { nextDueAt }),
    ...(replacementSaid === undefined ? {} : { replacementSaid }),
  };
}

/** The table's rows as cells, split on the column gaps. */
const cells = (lines: string[]) => lines.map((l) => l.trim().split(/ {2,}/));

describe('formatAge', () => {
  it.each([
    [0, '0s'],
    [42 * SEC, '42s'],
    [59_999, '59s'],
    [3 * MIN + 10 * SEC, '3m10s'],
    [2 * HOUR + 5 * MIN + 59 * SEC, '2h5m'],
    [50 * HOUR, '2d2h'],
    [-5 * SEC, '0s'],
  ])('%d ms reads %s', (ms, text) => expect(formatAge(ms)).toBe(text));
});

describe('formatDue', () => {
  it('says when, relative to now: in the future, now, late, or nothing due', () => {
    expect(formatDue(NOW + 42 * SEC, NOW)).toBe('in 42s');
    expect(formatDue(NOW + 500, NOW)).toBe('now');
    expect(formatDue(NOW - 3 * MIN - 10 * SEC, NOW)).toBe('3m10s late');
    expect(formatDue(undefined, NOW)).toBe('-');
  });
});

describe('renderStatusTable', () => {
  it('puts what needs a person first (blocked, failed, an overdue replacement), then open, awaiting a replacement, ended; oldest first within each', () => {
    const entries = [
      entry({ state: 'completed', target: { memberName: 'done' }, openedAt: NOW - 2 * HOUR, updatedAt: NOW - HOUR }),
      entry({ state: 'awaiting-replacement', target: { memberName: 'waiting' }, openedAt: NOW - 20 * MIN }),
      entry({ state: 'open', target: { memberName: 'young' }, openedAt: NOW - 10 * SEC }),
      entry({ state: 'awaiting-replacement', target: { memberName: 'overdue' }, openedAt: NOW - 40 * MIN, replacementSaid: 'REPLACEMENT_OVERDUE' }),
      entry({ state: 'open', target: { memberName: 'old' }, openedAt: NOW - 5 * MIN }),
      entry({ state: 'blocked', target: { memberName: 'stuck' }, openedAt: NOW - 3 * MIN, lastDecision: block('QUORUM_AT_RISK') }),
      entry({ state: 'failed', target: { memberName: 'broke' }, openedAt: NOW - 30 * MIN }),
    ];
    const lines = renderStatusTable({ entries, pauses: {}, now: NOW });
    expect(lines[0]).toMatch(/^ID +CLUSTER +TARGET +STATE +REASON +AGE +NEXT +ATTEMPT$/);
    expect(cells(lines.slice(1)).map((c) => c[2])).toEqual(['overdue', 'broke', 'stuck', 'old', 'young', 'waiting', 'done']);
    // Blocked and an overdue replacement say why in the reason column.
    expect(cells(lines.slice(1))[0]).toEqual([expect.any(String), 'prod', 'overdue', 'awaiting-replacement', 'REPLACEMENT_OVERDUE', '40m0s', '-', '1']);
    expect(cells(lines.slice(1))[2]![4]).toBe('QUORUM_AT_RISK');
  });

  it('shows the columns aligned: the id prefix, the member name once resolved, the last reason, age, next step and attempt', () => {
    const entries = [
      entry({
        incidentId: '0123456789abcdef',
        clusterId: 'c1',
        target: { memberName: 'etcd-0' },
        memberName: 'etcd-0',
        memberId: 'abc',
        openedAt: NOW - 42 * SEC,
        attempt: 3,
        lastDecision: retry('ELECTION_IN_PROGRESS', NOW + 10 * SEC),
      }),
      entry({ clusterId: 'a-much-longer-cluster', target: { nodeName: 'node-7' }, openedAt: NOW - 2 * HOUR - 5 * MIN, nextDueAt: NOW + 3 * MIN }),
    ];
    const lines = renderStatusTable({ entries, pauses: {}, now: NOW });
    expect(lines).toHaveLength(3);
    // Both open: the older first.
    expect(cells(lines)[2]).toEqual(['01234567', 'c1', 'etcd-0', 'open', 'ELECTION_IN_PROGRESS', '42s', 'in 10s', '3']);
    // Unresolved, the target is what the report named; with no decision yet, the reason is '-'.
    expect(cells(lines)[1]).toEqual([expect.any(String), 'a-much-longer-cluster', 'nodeName=node-7', 'open', '-', '2h5m', 'in 3m0s', '1']);
    // Every column starts at the same place on every line.
    for (const header of ['CLUSTER', 'TARGET', 'STATE', 'REASON', 'AGE', 'NEXT']) {
      const at = lines[0]!.indexOf(header);
      expect(lines.slice(1).every((l) => l[at - 1] === ' ' && l[at] !== ' ')).toBe(true);
    }
  });

  it('a timer of the scheduler says the next step before the last retry does', () => {
    const lines = renderStatusTable({ entries: [entry({ lastDecision: retry('PAUSED', NOW + 10 * MIN), nextDueAt: NOW + 5 * SEC })], pauses: {}, now: NOW });
    expect(cells(lines)[1]![6]).toBe('in 5s');
  });

  it('cuts the wider of target and reason first, then both, with …, never a line longer than the width', () => {
    const entries = [
      entry({ target: { memberName: 'a-member-with-a-very-long-name-indeed' }, lastDecision: retry('LEADER_UNREACHABLE_UNCONFIRMED', NOW + 10 * SEC) }),
    ];
    const wide = renderStatusTable({ entries, pauses: {}, now: NOW });
    const natural = Math.max(...wide.map((l) => l.length));
    expect(cells(wide)[1]![2]).toBe('a-member-with-a-very-long-name-indeed');
    // 37 characters of target against 30 of reason: 5 fewer columns cut the target alone.
    const lessWide = renderStatusTable({ entries, pauses: {}, now: NOW, width: natural - 5 });
    expect(Math.max(...lessWide.map((l) => l.length))).toBe(natural - 5);
    expect(cells(lessWide)[1]![2]).toBe('a-member-with-a-very-long-name-…');
    expect(cells(lessWide)[1]![4]).toBe('LEADER_UNREACHABLE_UNCONFIRMED');
    // 80 columns cut both, to about the same width; the other columns stay whole.
    const narrow = renderStatusTable({ entries, pauses: {}, now: NOW, width: 80 });
    expect(Math.max(...narrow.map((l) => l.length))).toBeLessThanOrEqual(80);
    const [, , target, state, reason, age, next, attempt] = cells(narrow)[1]!;
    expect(target).toMatch(/^a-member.*…$/);
    expect(reason).toMatch(/^LEADER_.*…$/);
    expect(Math.abs(target!.length - reason!.length)).toBeLessThanOrEqual(1);
    expect([state, age, next, attempt]).toEqual(['open', '1m0s', 'in 10s', '1']);
    // Narrower than the columns can shrink to: each line is cut at the width.
    const tiny = renderStatusTable({ entries, pauses: {}, now: NOW, width: 30 });
    expect(tiny.every((l) => l.length <= 30)).toBe(true);
    expect(tiny[1]).toMatch(/…$/);
  });

  it('leaves out incidents that ended before the recent window, and says how many', () => {
    const entries = [
      entry({ state: 'completed', updatedAt: NOW - 25 * HOUR, openedAt: NOW - 26 * HOUR }),
      entry({ state: 'awaiting-replacement', openedAt: NOW - 48 * HOUR, updatedAt: NOW - 47 * HOUR }),
      entry({ state: 'closed', updatedAt: NOW - HOUR }),
    ];
    const lines = renderStatusTable({ entries, pauses: {}, now: NOW, recentMs: 24 * HOUR });
    expect(cells(lines.slice(1, 3)).map((c) => c[3])).toEqual(['awaiting-replacement', 'closed']);
    expect(lines.at(-1)).toBe('1 incident ended before the last 24h is not shown (--all shows it)');
    expect(renderStatusTable({ entries, pauses: {}, now: NOW })).toHaveLength(4);
  });

  it('says there are none, and the pauses and the storm hold above the table', () => {
    expect(renderStatusTable({ entries: [], pauses: {}, now: NOW })).toEqual(['no incidents']);
    const storm = {
      count: 4,
      threshold: 2,
      registered: 10,
      clusters: ['a', 'b', 'c', 'd'],
      since: NOW - MIN,
      underFrom: NOW + 4 * MIN,
      liftsAt: NOW + 9 * MIN,
    };
    const entries = [
      entry({ lastDecision: retry('FLEET_STORM', NOW + 30 * SEC, { storm }) }),
      entry({ lastDecision: retry('FLEET_STORM', NOW + 20 * SEC, { storm }) }),
    ];
    const pauses = { fleet: { by: 'ops@box', at: NOW - MIN, why: 'zone b' }, clusters: { prod: { by: 'sre', at: NOW - HOUR, why: 'upgrade\x1b[2J' } } };
    const lines = renderStatusTable({ entries, pauses, now: NOW });
    expect(lines.slice(0, 3)).toEqual([
      'paused fleet-wide by ops@box since 2026-12-04T01:59:00.000Z: zone b (etcd-remediator resume)',
      'cluster prod paused by sre since 2026-12-04T01:00:00.000Z: upgrade\\x1b[2J (etcd-remediator resume --cluster prod)',
      'storm: 2 incidents deferred (FLEET_STORM), 4 clusters failed within the window, over 2 of 10 registered; lifts in 9m0s if no other cluster fails (etcd-remediator resume --storm)',
    ]);
    expect(lines[3]).toMatch(/^ID +CLUSTER/);
  });

  it('escapes what came from outside: a member name cannot forge a line or drive the terminal', () => {
    const lines = renderStatusTable({ entries: [entry({ target: { memberName: 'a\nb\x1b[2J' } })], pauses: {}, now: NOW });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('a\\nb\\x1b[2J');
  });
});

describe('leader hygiene above the table', () => {
  const judged = (reason: string, at: number) => ({ at, kind: 'hold', reason, message: 'said' });
  const move = (over: Partial<HygieneMoveRecord> = {}): HygieneMoveRecord => ({
    moveId: 'm-1',
    at: NOW - 4 * MIN,
    from: '8e9e05c52164694d',
    to: '91bc3c398fb3c146',
    term: 7,
    state: 'moved',
    endedAt: NOW - 3 * MIN,
    ...over,
  });
  const hygiene: ClusterHygiene[] = [
    { clusterId: 'prod-eu-1', record: { lastJudged: judged('HYGIENE_LEADER_HEALTHY', NOW - 40 * SEC), moves: [] } },
    {
      clusterId: 'lab',
      record: { lastJudged: judged('HYGIENE_COOLDOWN', NOW - 12 * SEC), moves: [move({ moveId: 'm-0', state: 'failed', endedAt: NOW - HOUR }), move()] },
    },
  ];

  it('one line a cluster, by id, after the pauses: the last judgement and how long ago, the last move when there is one', () => {
    const lines = renderStatusTable({ entries: [entry()], pauses: { fleet: { by: 'ops', at: NOW, why: 'zone b' } }, hygiene, now: NOW });
    expect(lines[0]).toMatch(/^paused fleet-wide by ops/);
    expect(lines.slice(1, 3)).toEqual([
      'leader hygiene  lab        HYGIENE_COOLDOWN 12s ago        last move 8e9e05c52164694d → 91bc3c398fb3c146 moved 3m0s ago',
      'leader hygiene  prod-eu-1  HYGIENE_LEADER_HEALTHY 40s ago',
    ]);
    expect(lines[3]).toMatch(/^ID +CLUSTER +TARGET/);
  });

  it('a move not over says when it was asked; a record not judged yet says so', () => {
    const lines = renderStatusTable({
      entries: [],
      pauses: {},
      hygiene: [{ clusterId: 'lab', record: { moves: [move({ state: 'asked', at: NOW - 5 * SEC, endedAt: undefined })] } }],
      now: NOW,
    });
    expect(lines).toEqual(['leader hygiene  lab  not judged yet  last move 8e9e05c52164694d → 91bc3c398fb3c146 asked 5s ago', 'no incidents']);
  });

  it('keeps to the width, and escapes what came from outside', () => {
    const lines = renderStatusTable({
      entries: [],
      pauses: {},
      hygiene: [{ clusterId: 'lab\x1b[2J', record: { lastJudged: judged('HYGIENE_COOLDOWN', NOW), moves: [move()] } }],
      now: NOW,
      width: 60,
    });
    expect(lines[0]).toHaveLength(60);
    expect(lines[0]).toMatch(/^leader hygiene {2}lab\\x1b\[2J {2}HYGIENE_COOLDOWN 0s ago {2}last m…$/);
  });

  it('says nothing when no cluster has a record', () => {
    expect(renderStatusTable({ entries: [], pauses: {}, hygiene: [], now: NOW })).toEqual(['no incidents']);
  });

  it('changes the watch key when a judgement or a move changes, not as time passes', () => {
    const key = statusChangeKey({ entries: [], pauses: {}, hygiene, now: NOW });
    expect(statusChangeKey({ entries: [], pauses: {}, hygiene, now: NOW + MIN })).toBe(key);
    const judgedAgain: ClusterHygiene[] = [
      hygiene[0]!,
      { clusterId: 'lab', record: { ...hygiene[1]!.record, lastJudged: judged('HYGIENE_LEADER_HEALTHY', NOW) } },
    ];
    expect(statusChangeKey({ entries: [], pauses: {}, hygiene: judgedAgain, now: NOW })).not.toBe(key);
    const moving: ClusterHygiene[] = [hygiene[0]!, { clusterId: 'lab', record: { ...hygiene[1]!.record, moves: [move({ state: 'moving' })] } }];
    expect(statusChangeKey({ entries: [], pauses: {}, hygiene: moving, now: NOW })).not.toBe(key);
  });
});

describe('statusChangeKey', () => {
  it('changes when a row moves on, not as time passes', () => {
    const a = [entry({ lastDecision: retry('PAUSED', NOW + MIN) })];
    const key = statusChangeKey({ entries: a, pauses: {}, now: NOW });
    expect(statusChangeKey({ entries: a, pauses: {}, now: NOW + 30 * SEC })).toBe(key);
    expect(statusChangeKey({ entries: [{ ...a[0]!, incident: { ...a[0]!.incident, attempt: 2 } }], pauses: {}, now: NOW })).not.toBe(key);
    expect(statusChangeKey({ entries: a, pauses: { fleet: { by: 'x', at: NOW, why: 'y' } }, now: NOW })).not.toBe(key);
  });
});

describe('fitHeight', () => {
  it('keeps the last line of the terminal free, so a redraw never scrolls, and says what it left out', () => {
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i}`);
    expect(fitHeight(lines, 13)).toEqual(lines);
    expect(fitHeight(lines, undefined)).toEqual(lines);
    const cut = fitHeight(lines, 10);
    expect(cut).toHaveLength(9);
    expect(cut.slice(0, 8)).toEqual(lines.slice(0, 8));
    expect(cut[8]).toBe('… 4 more lines (a taller terminal shows them)');
  });
});
