// The incident report's model, pure: a lane per member with what each probe saw, the marks in time
// order, the grace window, the figures, and every outside string escaped once the page is drawn.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../functions/core/common/decision.ts';
import { membersSeen, type JournalEntry, type JournalLine } from '../../../functions/core/incident/journal.ts';
import type { PathName } from '../../../functions/core/common/types.ts';
import type { ClusterView } from '../../../functions/core/view/view.ts';
import type { Incident } from '../../../functions/ports/incident-store.ts';
import { maintenanceRunOf, reportModel } from '../../../infra/cli/report/report-model.ts';
import { renderReport } from '../../../infra/cli/report/report-page.ts';
import { cluster, id, view } from '../core/fixtures.ts';

const T0 = Date.parse('2026-12-04T02:00:00Z');
const line = (at: number, rest: JournalLine): JournalEntry => ({ ...rest, at: T0 + at, isStepMarker: false });
const down = { paths: 'refused' as const };

const approval: Decision = {
  kind: 'approve',
  leaderMove: 'skipped',
  reason: 'LEADER_UNREACHABLE_PAST_GRACE',
  message: 'etcd-0 is the leader and unreachable; removal is approved without a leader move.',
  evidence: { targetId: id(0), attempt: 4, grace: { since: T0 + 20, endsAt: T0 + 3_020 }, gate: { reason: 'QUORUM_SAFE', needed: 2 } },
};

function incident(over: Partial<Incident> = {}): Incident {
  return {
    incidentId: 'ee10d6de-4128-4195-b43d-c03b507dab35',
    clusterId: 'prod',
    targetKey: 'memberName=etcd-0',
    target: { memberName: 'etcd-0' },
    reason: 'kubelet not ready',
    state: 'awaiting-replacement',
    openedAt: T0,
    updatedAt: T0 + 4_000,
    attempt: 3,
    waits: 2,
    immediateReprobes: 0,
    memberId: id(0),
    memberName: 'etcd-0',
    // The leader etcd-0 down, the followers naming it at term 2; after the removal etcd-2 leads at term 3.
    views: [
      cluster(T0 + 20, 3, { leader: 0, override: { 0: down } }),
      cluster(T0 + 1_500, 3, { leader: 0, override: { 0: down, 2: { paths: { direct: 'refused', 'exec-relay': 'ok' } } } }),
      view(T0 + 3_600, [
        { i: 1, leader: 2, term: 3 },
        { i: 2, leader: 2, term: 3 },
      ]),
    ],
    lastDecision: approval,
    outbox: [],
    stepsDone: [],
    version: 9,
    ...over,
  };
}

/** A probe line as probe-members writes it: every member as the probe saw it. */
const probed = (at: number, seen: ClusterView): JournalEntry =>
  line(at, { step: 'probed', detail: { answered: 2, members: 3, leader: 'agreed', leaderName: 'etcd-0', listFailures: [], seen: membersSeen(seen) } });
// The three probes of the grace window: the leader etcd-0 down, the followers naming it at term 2;
// at the second, etcd-2's direct path refused and its exec relay answering.
const [firstView, secondView] = incident().views;
const thirdView = cluster(T0 + 3_030, 3, { leader: 0, override: { 0: down } });

const seedJournal: JournalEntry[] = [
  line(0, {
    step: 'incident-opened',
    detail: { source: 'mhc', targetKey: 'memberName=etcd-0', reason: 'kubelet not ready', observedAt: new Date(T0).toISOString() },
  }),
  probed(20, firstView!),
  line(25, { step: 'move-leader:retry', detail: { reason: 'LEADER_UNREACHABLE', message: 'the grace window ends later' } }),
  line(26, { step: 'retry-scheduled', detail: { attempt: 1, at: new Date(T0 + 1_480).toISOString(), reason: 'LEADER_UNREACHABLE' } }),
  probed(1_500, secondView!),
  line(1_510, { step: 'move-leader:retry', detail: { reason: 'ETCD_TRANSIENT', message: 'etcd said unhealthy cluster' } }),
  line(1_511, { step: 'retry-scheduled', detail: { attempt: 2, at: new Date(T0 + 3_000).toISOString(), reason: 'ETCD_TRANSIENT' } }),
  probed(3_030, thirdView),
  line(3_040, { step: 'move-leader:approve', detail: { reason: 'LEADER_UNREACHABLE_PAST_GRACE', message: approval.message } }),
  line(3_100, {
    step: 'snapshot-taken',
    detail: { location: '/snap/etcd-0.db', via: 'etcd-1 over direct', bytes: 20_000, sha256: 'ab'.repeat(32), tookMs: 40 },
  }),
  line(3_300, { step: 'member-removed', detail: { via: 'etcd-1 over direct', alreadyGone: false } }),
  line(3_900, { step: 'leader-elected', detail: { id: id(2), name: 'etcd-2', term: 3, afterRemovalMs: 600 } }),
  line(3_950, { step: 'actuator-called', detail: { actuator: 'etcd-only', said: 'machine left as it is' } }),
];

describe('reportModel', () => {
  it('gives one lane per member the probes saw, the target first and marked, with what each probe saw', () => {
    const model = reportModel({ incident: incident(), journal: seedJournal });
    expect(model.lanes.map((l) => [l.name, l.isTarget])).toEqual([
      ['etcd-0', true],
      ['etcd-1', false],
      ['etcd-2', false],
    ]);
    const [target, one, two] = model.lanes;
    // Unreachable at every probe, the target named no leader.
    expect(target!.probes).toEqual([
      { at: T0 + 20, reachable: false, failed: [{ path: 'direct', reachability: 'refused' }] },
      { at: T0 + 1_500, reachable: false, failed: [{ path: 'direct', reachability: 'refused' }] },
      { at: T0 + 3_030, reachable: false, failed: [{ path: 'direct', reachability: 'refused' }] },
    ]);
    expect(one!.probes.map((p) => [p.at - T0, p.path, p.leader, p.term])).toEqual([
      [20, 'direct', 'etcd-0', 2],
      [1_500, 'direct', 'etcd-0', 2],
      [3_030, 'direct', 'etcd-0', 2],
    ]);
    // Its direct path refused, etcd-2 answered through the exec relay.
    expect(two!.probes[1]).toMatchObject({ reachable: true, path: 'exec-relay', failed: [{ path: 'direct', reachability: 'refused' }] });
    expect(model.probes).toBe(3);
  });

  it('draws every probe from the journal, past the views the incident kept', () => {
    // Twelve probes of the grace window, each line with every member as the probe saw it; the incident kept none of them.
    const probes = Array.from({ length: 12 }, (_, k) =>
      line(100 + k * 250, {
        step: 'probed',
        detail: {
          answered: 2,
          members: 3,
          leader: 'agreed',
          leaderName: 'etcd-0',
          listFailures: [],
          seen: [
            { memberId: id(0), name: 'etcd-0', failed: [{ path: 'direct', reachability: 'refused' }] },
            { memberId: id(1), name: 'etcd-1', path: 'direct', leaderId: id(0), term: 2 },
            { memberId: id(2), name: 'etcd-2', path: 'exec-relay', failed: [{ path: 'direct', reachability: 'timeout' }], leaderId: id(0), term: 2 },
          ],
        },
      }),
    );
    const model = reportModel({ incident: incident({ views: [] }), journal: [seedJournal[0]!, ...probes] });
    expect(model.lanes.map((l) => [l.name, l.isTarget, l.probes.length])).toEqual([
      ['etcd-0', true, 12],
      ['etcd-1', false, 12],
      ['etcd-2', false, 12],
    ]);
    const [target, one, two] = model.lanes;
    expect(target!.probes[0]).toEqual({ at: T0 + 100, reachable: false, failed: [{ path: 'direct', reachability: 'refused' }] });
    expect(one!.probes[11]).toEqual({ at: T0 + 100 + 11 * 250, reachable: true, path: 'direct', failed: [], leader: 'etcd-0', term: 2 });
    expect(two!.probes[5]).toMatchObject({ reachable: true, path: 'exec-relay', failed: [{ path: 'direct', reachability: 'timeout' }], leader: 'etcd-0' });
    expect(model.probes).toBe(12);
  });

  it('places the marks in time order, with the removal, the snapshot and the new leader once each', () => {
    const model = reportModel({ incident: incident(), journal: seedJournal });
    const times = model.marks.map((m) => m.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(model.marks.filter((m) => m.kind !== 'decision').map((m) => [m.kind, m.at - T0])).toEqual([
      ['snapshot', 3_100],
      ['removal', 3_300],
      ['new-leader', 3_900],
    ]);
    expect(model.marks.filter((m) => m.kind === 'decision').map((m) => [m.label, m.final])).toEqual([
      ['LEADER_UNREACHABLE', false],
      ['ETCD_TRANSIENT', false],
      ['LEADER_UNREACHABLE_PAST_GRACE', true],
    ]);
  });

  it('draws probes, waits (a waiting reason) and retries (a backoff), the snapshot, the removal and the election as bars', () => {
    const model = reportModel({ incident: incident(), journal: seedJournal });
    expect(model.bars.map((b) => [b.kind, b.label, b.from - T0, b.to - T0])).toEqual([
      ['probe', 'probe', 0, 20],
      ['wait', 'LEADER_UNREACHABLE', 26, 1_480],
      ['probe', 'probe', 1_480, 1_500],
      ['retry', 'ETCD_TRANSIENT', 1_511, 3_000],
      ['probe', 'probe', 3_000, 3_030],
      ['snapshot', 'snapshot', 3_060, 3_100],
      ['removal', 'remove', 3_040, 3_300],
      ['election', 'election', 3_300, 3_900],
      ['replacement', 'awaiting replacement', 3_950, 4_000],
    ]);
    expect(model.grace).toEqual({ from: T0 + 20, to: T0 + 3_020 });
    expect([model.start, model.end]).toEqual([T0, T0 + 4_000]);
  });

  it('draws a leader move as a bar of the time it took, and marks it', () => {
    const moved = line(900, {
      step: 'leader-moved',
      detail: { from: id(0), to: id(1), path: 'direct', tookMs: 120, message: 'leadership moved from etcd-0 to etcd-1' },
    });
    const model = reportModel({ incident: incident(), journal: [...seedJournal.slice(0, 2), moved] });
    expect(model.bars.filter((b) => b.kind === 'move-leader').map((b) => [b.from - T0, b.to - T0, b.row])).toEqual([[780, 900, 'action']]);
    expect(model.marks.filter((m) => m.kind === 'leader-move').map((m) => [m.at - T0, m.detail])).toEqual([[900, 'leadership moved from etcd-0 to etcd-1']]);
  });

  it('says the figures from the event, and none for what did not happen', () => {
    const model = reportModel({ incident: incident(), journal: seedJournal });
    expect(model.figures).toEqual([
      { label: 'event → decision', ms: 3_040 },
      { label: 'event → removal', ms: 3_300 },
      { label: 'event → new leader', ms: 3_900 },
      { label: 'event → replacement joined' },
    ]);
  });

  it('heads a removal with its approval, and a recovery as recovered with the close’s own reason', () => {
    const removed = reportModel({ incident: incident(), journal: seedJournal });
    expect([removed.state, removed.reason, removed.message]).toEqual(['awaiting-replacement', 'LEADER_UNREACHABLE_PAST_GRACE', approval.message]);
    expect(removed.evidence).toContainEqual({ term: 'attempt', value: '4', nested: false });
    expect(removed.evidence.find((e) => e.term === 'gate')).toEqual({ term: 'gate', value: JSON.stringify(approval.evidence.gate), nested: true });

    const close: Decision = {
      kind: 'close',
      reason: 'TARGET_RECOVERED',
      message: 'etcd-0 answers again, healthy.',
      evidence: { grace: { since: T0 + 20, endsAt: T0 + 60_020 } },
    };
    const recovered = reportModel({
      incident: incident({ state: 'closed', lastDecision: close, result: { reason: 'TARGET_RECOVERED', message: close.message, evidence: close.evidence } }),
      journal: seedJournal.slice(0, 5),
    });
    expect([recovered.state, recovered.storedState, recovered.reason]).toEqual(['recovered', 'closed', 'TARGET_RECOVERED']);
    expect(recovered.figures.every((f) => f.ms === undefined)).toBe(true);
    expect(recovered.grace).toEqual({ from: T0 + 20, to: T0 + 60_020 });
  });
});

describe('the maintenance run an incident lived through', () => {
  const step = (key: string, at: number, tookMs: number, outcome: 'done' | 'failed' = 'done') => ({
    key,
    at: T0 + at,
    tookMs,
    outcome,
    message: `${key} said`,
  });
  const done = [step(`defragment:${id(1)}`, 100, 400), step(`defragment:${id(2)}`, 600, 300, 'failed'), step('disarm', 1_000, 20)];
  const ended = { runId: 'maintenance-prod-1', startedAt: T0 + 50, reason: 'MAINTENANCE_NOSPACE' as const, askedBy: 'incident:x', done };

  it('is the run in flight, else the last one ended while the incident was open; one ended before it opened is not', () => {
    const lastRun = { ...ended, endedAt: T0 + 1_100, outcome: 'done' as const, endReason: 'MAINTENANCE_NOT_NEEDED' as const, message: 'cleared' };
    expect(maintenanceRunOf({ lastRun }, incident())).toMatchObject({ runId: 'maintenance-prod-1', ending: { outcome: 'done', endedAt: T0 + 1_100 } });
    expect(maintenanceRunOf({ run: ended }, incident())).toMatchObject({ runId: 'maintenance-prod-1', done });
    expect(maintenanceRunOf({ run: ended }, incident())).not.toHaveProperty('ending');
    expect(maintenanceRunOf({ lastRun: { ...lastRun, endedAt: T0 - 1 } }, incident())).toBeUndefined();
    expect(maintenanceRunOf({ run: { ...ended, startedAt: T0 + 10_000 } }, incident())).toBeUndefined();
    expect(maintenanceRunOf(undefined, incident())).toBeUndefined();
  });

  it('draws each step as a maintenance bar naming the member, and lists the steps in a section of their own', () => {
    const m = reportModel({
      incident: incident(),
      journal: seedJournal,
      maintenance: { runId: 'maintenance-prod-1', reason: 'MAINTENANCE_NOSPACE', startedAt: T0 + 50, done },
    });
    expect(m.bars.filter((b) => b.kind === 'maintenance')).toEqual([
      { kind: 'maintenance', row: 'action', label: 'defragment etcd-1', from: T0 + 100, to: T0 + 500 },
      { kind: 'maintenance', row: 'action', label: 'defragment etcd-2', from: T0 + 600, to: T0 + 900 },
      { kind: 'maintenance', row: 'action', label: 'disarm', from: T0 + 1_000, to: T0 + 1_020 },
    ]);
    expect(m.maintenance).toMatchObject({ runId: 'maintenance-prod-1', state: 'running', reason: 'MAINTENANCE_NOSPACE' });
    const page = renderReport(m);
    expect(page).toContain('<section data-maintenance="maintenance-prod-1">');
    expect(page).toMatch(/<tr data-step="defragment etcd-2"><td class="at">\+600ms<\/td><td class="step">defragment etcd-2<\/td><td>failed, 300ms<\/td>/);
    // No run, no section.
    expect(renderReport(reportModel({ incident: incident(), journal: seedJournal }))).not.toContain('data-maintenance');
  });
});

describe('renderReport', () => {
  it('escapes every string that came from outside: a member named <script>, a message with markup', () => {
    const evil = '<script>alert(1)</script>';
    const seen = view(T0 + 20, [
      { i: 0, paths: 'refused' },
      { i: 1, leader: 0 },
      { i: 2, leader: 0 },
    ]);
    const views = [
      {
        ...seen,
        // A state file is outside input too: even a path's name is escaped where the page uses it.
        members: seen.members.map((m) =>
          m.id === id(1) ? { ...m, name: evil } : m.id === id(2) ? { ...m, paths: m.paths.map((p) => ({ ...p, path: evil as PathName })) } : m,
        ),
      },
    ];
    const html = renderReport(
      reportModel({
        incident: incident({
          views,
          state: '__proto__' as Incident['state'],
          clusterId: '"><img src=x onerror=alert(1)>',
          lastDecision: { ...approval, evidence: { note: evil } },
        }),
        journal: seedJournal.map((e) =>
          e.step === 'move-leader:approve'
            ? line(e.at - T0, { step: 'move-leader:approve', detail: { reason: 'LEADER_UNREACHABLE_PAST_GRACE', message: `said ${evil} & more` } })
            : e.step === 'probed'
              ? probed(e.at - T0, views[0]!)
              : e,
        ),
      }),
    );
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('said &lt;script&gt;');
    expect(html).toContain('&amp; more');
    expect(html).toContain('data-path="&lt;script&gt;');
    expect(html).toContain('class="state neutral"');
  });

  it('is one page that asks for nothing outside it', () => {
    const html = renderReport(reportModel({ incident: incident(), journal: seedJournal }));
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|\ssrc=|url\(|@import|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(html).toContain('data-marker="removal"');
    expect((html.match(/data-lane=/g) ?? []).length).toBe(3);
  });
});
