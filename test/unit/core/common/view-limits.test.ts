// The limits a view, a history and what an outcome says are kept within.
import { describe, expect, it } from 'vitest';
import { clusterViewSchema } from '../../../../events/schemas/cluster-view.ts';
import { boundedView } from '../../../../functions/core/view/bounded-view.ts';
import {
  boundedEvidence,
  boundedSaid,
  boundedTimeline,
  clipMessage,
  MAX_EVIDENCE_BYTES,
  MAX_MESSAGE_CHARS,
  MAX_TIMELINE_DETAIL_BYTES,
  MAX_TIMELINE_ENTRIES,
} from '../../../../functions/core/common/said-limits.ts';
import { keptViews, MAX_HISTORY_BYTES, MAX_INCIDENT_VIEWS, viewBytes } from '../../../../functions/core/view/view-history.ts';
import { clipText, jsonBytes, TEXT_LIMITS, VIEW_LIMITS } from '../../../../functions/core/common/view-limits.ts';
import { worstView } from '../../../support/worst-case-view.ts';
import { cluster, view } from '../fixtures.ts';

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

describe('clipText', () => {
  it.each([
    ['ASCII', 'a'.repeat(1_000)],
    ['three-byte characters', '€'.repeat(1_000)],
    ['control characters, six bytes each as JSON', '\u0001'.repeat(1_000)],
    ['surrogate pairs', '😀'.repeat(1_000)],
  ])('%s: at most the limit in JSON bytes, ending in an ellipsis, no pair split', (_, text) => {
    const clipped = clipText(text, 100);
    expect(jsonBytes(clipped)).toBeLessThanOrEqual(100);
    expect(jsonBytes(clipped)).toBeGreaterThan(100 - 12);
    expect(clipped.endsWith('…')).toBe(true);
    expect(clipped).toBe(clipped.toWellFormed());
    expect(text.startsWith(clipped.slice(0, -1))).toBe(true);
  });

  it('leaves a text within the limit as it is', () => {
    expect(clipText('etcdserver: not leader', 100)).toBe('etcdserver: not leader');
    expect(clipText('€'.repeat(33), 99)).toBe('€'.repeat(33));
  });
});

describe('boundedView', () => {
  it('holds every text and list of the largest probe to its limit, and the schema takes it', () => {
    const view = worstView(VIEW_LIMITS.members);
    expect(clusterViewSchema.safeParse(view).success).toBe(true);
    for (const m of view.members) {
      expect(jsonBytes(m.name)).toBeLessThanOrEqual(TEXT_LIMITS.name);
      expect(m.clientUrls).toHaveLength(VIEW_LIMITS.urls);
      for (const p of m.paths) {
        expect(jsonBytes(p.endpoint)).toBeLessThanOrEqual(TEXT_LIMITS.endpoint);
        expect(jsonBytes(p.failure!.message)).toBeLessThanOrEqual(TEXT_LIMITS.message);
      }
      expect(m.status!.errors).toHaveLength(VIEW_LIMITS.errors);
    }
    expect(view.identity!.reports).toHaveLength(VIEW_LIMITS.identityReports);
    expect(view.machines).toHaveLength(VIEW_LIMITS.machines);
  });

  it('derives from everything the probe saw before it cuts: an unhealthy member stays unhealthy', () => {
    const errors = [...Array.from({ length: 2 * VIEW_LIMITS.errors }, () => 'etcdserver: no leader'), 'etcdserver: mvcc: database space exceeded'];
    const built = view(0, [
      { i: 0, leader: 0, errors },
      { i: 1, leader: 0 },
      { i: 2, leader: 0 },
    ]);
    expect(built.members[0]!.healthy).toBe(false);
    expect(built.members[0]!.status!.errors).toEqual(Array.from({ length: VIEW_LIMITS.errors }, () => 'etcdserver: no leader'));
  });

  it('keeps no Machines when there are more than a view holds: one left out would pass for a worker', () => {
    const three = cluster(0, 3);
    const machines = Array.from({ length: VIEW_LIMITS.machines + 1 }, (_, i) => ({ name: `wl-cp-${i}`, deleting: false }));
    expect(boundedView({ ...three, machines }).machines).toBeUndefined();
    expect(boundedView({ ...three, machines: machines.slice(1) }).machines).toHaveLength(VIEW_LIMITS.machines);
  });

  it('leaves a view within its limits as it is', () => {
    const three = cluster(0, 3);
    expect(boundedView(three)).toEqual(three);
  });
});

describe('keptViews', () => {
  it('at most MAX_INCIDENT_VIEWS, the newest, oldest first', () => {
    const views = Array.from({ length: MAX_INCIDENT_VIEWS + 5 }, (_, i) => cluster(i, 3));
    expect(keptViews(views).map((v) => v.at)).toEqual(views.slice(-MAX_INCIDENT_VIEWS).map((v) => v.at));
  });

  it('at most MAX_HISTORY_BYTES, whatever the count; the newest always', () => {
    const views = Array.from({ length: MAX_INCIDENT_VIEWS }, (_, i) => worstView(VIEW_LIMITS.members, i));
    const kept = keptViews(views);
    expect(kept.reduce((sum, v) => sum + viewBytes(v), 0)).toBeLessThanOrEqual(MAX_HISTORY_BYTES);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.map((v) => v.at)).toEqual(views.slice(-kept.length).map((v) => v.at));
    const huge = { ...views[0]!, pathLookFailure: 'x'.repeat(MAX_HISTORY_BYTES) };
    expect(keptViews([views[0]!, huge])).toEqual([huge]);
  });
});

describe('what an outcome says', () => {
  it('a message past MAX_MESSAGE_CHARS is cut there, never through a surrogate pair', () => {
    const cut = clipMessage('a'.repeat(MAX_MESSAGE_CHARS - 2) + '😀😀😀');
    expect(cut.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(cut).toBe(cut.toWellFormed());
    expect(cut.endsWith('…')).toBe(true);
    expect(clipMessage('short')).toBe('short');
  });

  it('evidence past MAX_EVIDENCE_BYTES keeps its entries in order while they fit, and names the rest', () => {
    const evidence = { targetId: 'f1', reports: 'r'.repeat(MAX_EVIDENCE_BYTES), names: { a: 'b' } };
    const bounded = boundedEvidence(evidence);
    expect(bytes(bounded)).toBeLessThanOrEqual(MAX_EVIDENCE_BYTES);
    expect(bounded).toEqual({ targetId: 'f1', names: { a: 'b' }, omitted: ['reports'] });
    expect(boundedEvidence({ targetId: 'f1' })).toEqual({ targetId: 'f1' });
  });

  it('boundedSaid bounds a detail’s message and evidence, and leaves the rest and anything else alone', () => {
    const detail = { reason: 'QUORUM_AT_RISK', message: 'm'.repeat(3 * MAX_MESSAGE_CHARS), evidence: { big: 'e'.repeat(2 * MAX_EVIDENCE_BYTES) } };
    const said = boundedSaid(detail);
    expect(said.reason).toBe('QUORUM_AT_RISK');
    expect(said.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(said.evidence).toEqual({ omitted: ['big'] });
    const small = { message: 'fine', evidence: { a: 1 } };
    expect(boundedSaid(small)).toBe(small);
    expect(boundedSaid('text')).toBe('text');
  });

  it('a timeline past MAX_TIMELINE_ENTRIES keeps its first and last lines, and says how many went between', () => {
    const lines = Array.from({ length: 500 }, (_, i) => ({ at: `t${i}`, step: 'probed', detail: `${i} ${'€'.repeat(1_000)}` }));
    const timeline = boundedTimeline(lines);
    expect(timeline).toHaveLength(MAX_TIMELINE_ENTRIES);
    expect(timeline[0]!.at).toBe('t0');
    expect(timeline.at(-1)!.at).toBe('t499');
    const gap = timeline.find((l) => l.step === 'timeline-cut')!;
    expect(gap.detail).toBe(`${500 - MAX_TIMELINE_ENTRIES + 1} lines left out here; the journal keeps them all`);
    for (const line of timeline) expect(jsonBytes(line.detail)).toBeLessThanOrEqual(MAX_TIMELINE_DETAIL_BYTES);
    expect(boundedTimeline(lines.slice(0, 3)).map((l) => l.at)).toEqual(['t0', 't1', 't2']);
  });
});
