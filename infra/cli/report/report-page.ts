// The incident report's model drawn as one self-contained HTML page: inline CSS and an inline SVG
// timeline, no script, font, image or link to anything outside it, so it opens anywhere (a mail, a
// ticket, a laptop offline). Every string that came from outside (member names, etcd's messages,
// a report's reason) goes through `esc`: an operator may well name a member "<script>".
import { stateReading } from '../../../functions/core/incident/index.ts';
import { formatDuration } from '../duration.ts';
import type { Bar, BarRow, Lane, LaneProbe, Mark, ReportModel } from './report-model.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const esc = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

// The timeline's geometry, in SVG user units (the SVG scales to the page's width).
const LEFT = 170;
const PLOT = 1000;
const RIGHT = 30;
const WIDTH = LEFT + PLOT + RIGHT;
const ROW = 34;
const LANE = 46;
const MARK_LABEL_ROW = 16;

const PATH_LETTER: Record<string, string> = { direct: 'D', 'port-forward': 'P', 'exec-relay': 'X' };
const ROWS: { row: BarRow; label: string }[] = [
  { row: 'probe', label: 'probes' },
  { row: 'wait', label: 'waits, retries' },
  { row: 'action', label: 'actions' },
];

const duration = (ms: number | undefined): string => (ms === undefined ? '—' : formatDuration(ms));

/** A tick step of 1, 2 or 5 times a power of ten giving about eight ticks. */
function tickStep(spanMs: number): number {
  const rough = spanMs / 8;
  const power = 10 ** Math.floor(Math.log10(Math.max(rough, 1)));
  return [1, 2, 5, 10].map((f) => f * power).find((s) => s >= rough) ?? 10 * power;
}

/** Labels set in rows so that none overlaps another in its row; one that would run off the right ends at its mark. */
function stagger(marks: readonly Mark[], x: (at: number) => number, start: number): { mark: Mark; row: number; text: string; anchorEnd: boolean }[] {
  const ends: number[] = [];
  return marks.map((mark) => {
    const text = `${mark.label} +${formatDuration(mark.at - start)}`;
    const at = x(mark.at);
    // Wide enough for the bold capitals of a reason code (about 8.4 px a character at this size).
    const width = text.length * 8.4 + 8;
    const anchorEnd = at + width > WIDTH - 4;
    const from = anchorEnd ? at - width : at;
    let row = ends.findIndex((end) => end < from);
    if (row < 0) row = ends.length;
    ends[row] = from + width;
    return { mark, row, text, anchorEnd };
  });
}

/** One probe's mark on a lane, as wide as the room before the next probe allows; its letter only where it fits. */
function laneProbe(p: LaneProbe, previous: LaneProbe | undefined, x: number, room: number, y: number): string {
  const said = p.leader === undefined ? '' : `${p.leader}${p.term === undefined ? '' : ` t${p.term}`}`;
  const before = previous?.leader === undefined ? '' : `${previous.leader}${previous.term === undefined ? '' : ` t${previous.term}`}`;
  const failed = p.failed.map((f) => `${f.path} ${f.reachability}`).join(', ');
  const title = `${p.reachable ? `reachable on ${p.path}` : 'unreachable'}${failed ? ` (${failed})` : ''}${said ? `; names ${said === 'none' ? 'no leader' : `${said} leader`}` : ''}`;
  const w = Math.max(3, Math.min(14, room - 2));
  const letter =
    w >= 11
      ? `<text class="letter" x="${x}" y="${y + 4}">${p.reachable ? (p.path !== undefined && Object.hasOwn(PATH_LETTER, p.path) ? PATH_LETTER[p.path] : '?') : '✕'}</text>`
      : '';
  const mark = `<rect class="${p.reachable ? 'ok' : 'down'}" x="${x - w / 2}" y="${y - 8}" width="${w}" height="16"${p.reachable ? ' rx="2"' : ''}/>${letter}`;
  // Whom it names leader, said when it changes along the lane, so dense probes stay legible.
  const label = said && said !== before ? `<text class="said" x="${x - w / 2}" y="${y - 11}">→ ${esc(said)}</text>` : '';
  return `<g class="probe" data-reachable="${p.reachable ? 'true' : 'false'}" data-path="${esc(p.path ?? 'none')}"><title>${esc(title)}</title>${mark}${label}</g>`;
}

function lane(l: Lane, y: number, x: (at: number) => number): string {
  const probes = l.probes
    .map((p, i) => {
      const next = l.probes[i + 1];
      return laneProbe(p, l.probes[i - 1], x(p.at), next ? x(next.at) - x(p.at) : 14, y + LANE / 2 + 6);
    })
    .join('');
  const name = `<text class="lane-name${l.isTarget ? ' target' : ''}" x="10" y="${y + LANE / 2 + 4}">${esc(l.name)}${l.isTarget ? ' ◆ target' : ''}</text>`;
  const band = `<rect class="lane${l.isTarget ? ' target' : ''}" x="0" y="${y}" width="${WIDTH}" height="${LANE}"/>`;
  return `<g data-lane="${esc(l.name)}" data-member="${esc(l.memberId)}"${l.isTarget ? ' data-target="true"' : ''}>${band}${name}${probes}</g>`;
}

function bar(b: Bar, y: number, x: (at: number) => number): string {
  const x0 = x(b.from);
  const w = Math.max(2, x(b.to) - x0);
  const text = `${b.label} ${duration(b.to - b.from)}`;
  // The words inside the bar when they fit, beside it otherwise.
  const label = w > text.length * 6.4 + 8 ? `<text class="bar-text" x="${x0 + 4}" y="${y + 17}">${esc(text)}</text>` : '';
  return `<g data-bar="${b.kind}"><title>${esc(text)}</title><rect class="bar ${b.kind}" x="${x0}" y="${y + 5}" width="${w}" height="${ROW - 10}" rx="2"/>${label}</g>`;
}

function timeline(m: ReportModel): string {
  const span = m.end - m.start;
  const x = (at: number) => LEFT + ((Math.min(Math.max(at, m.start), m.end) - m.start) / span) * PLOT;
  // Each ending decision is a tick; the first of each reason is labelled too (a removal refused and retried approves again).
  const labelled = new Set<string>();
  const special = m.marks.filter((k) => {
    if (k.kind !== 'decision') return true;
    if (!k.final || labelled.has(k.label)) return false;
    labelled.add(k.label);
    return true;
  });
  const labels = stagger(special, x, m.start);
  const labelRows = Math.max(1, ...labels.map((l) => l.row + 1));
  const axisY = 22;
  const marksY = axisY + 14;
  const rowsY = marksY + labelRows * MARK_LABEL_ROW + 8;
  const decisionsY = rowsY + ROWS.length * ROW;
  const lanesY = decisionsY + ROW + 10;
  const height = lanesY + m.lanes.length * LANE + 22;

  const step = tickStep(span);
  const ticks: string[] = [];
  for (let t = 0; t <= span; t += step) {
    const tx = x(m.start + t);
    ticks.push(
      `<line class="grid" x1="${tx}" y1="${axisY + 4}" x2="${tx}" y2="${height}"/><text class="tick" x="${tx}" y="${axisY}">+${formatDuration(t)}</text>`,
    );
  }
  const graceWords = m.grace ? `grace window ${duration(m.grace.to - m.grace.from)}${m.grace.to > m.end ? ', running past the last step' : ''}` : '';
  const grace = m.grace
    ? `<g data-grace="true"><title>${esc(graceWords)}</title><rect class="grace" x="${x(m.grace.from)}" y="${rowsY}" width="${Math.max(2, x(m.grace.to) - x(m.grace.from))}" height="${height - rowsY}"/><text class="grace-text" x="${x(m.grace.from) + 4}" y="${height - 6}">${esc(graceWords)}</text></g>`
    : '';
  const rowLabels = ROWS.map((r, i) => `<text class="row-name" x="10" y="${rowsY + i * ROW + 21}">${r.label}</text>`).join('');
  const bars = m.bars.map((b) => bar(b, rowsY + ROWS.findIndex((r) => r.row === b.row) * ROW, x)).join('');
  const decisions = m.marks
    .filter((k) => k.kind === 'decision')
    .map((k) => {
      const dx = x(k.at);
      return `<g data-decision="${esc(k.label)}"><title>${esc(`+${formatDuration(k.at - m.start)} ${k.detail}`)}</title><line class="verdict${k.final ? ' final' : ''}" x1="${dx}" y1="${decisionsY + 6}" x2="${dx}" y2="${decisionsY + ROW - 6}"/></g>`;
    })
    .join('');
  const markLines = labels
    .map(({ mark, row, text, anchorEnd }) => {
      const mx = x(mark.at);
      const ly = marksY + row * MARK_LABEL_ROW + 11;
      const tx = anchorEnd ? `x="${mx - 3}" text-anchor="end"` : `x="${mx + 3}"`;
      return `<g data-marker="${mark.kind}"><title>${esc(`+${formatDuration(mark.at - m.start)} ${mark.detail}`)}</title><line class="mark ${mark.kind}" x1="${mx}" y1="${ly + 3}" x2="${mx}" y2="${height}"/><text class="mark-text ${mark.kind}" ${tx} y="${ly}">${esc(text)}</text></g>`;
    })
    .join('');
  const lanes = m.lanes.map((l, i) => lane(l, lanesY + i * LANE, x)).join('');
  return `<svg class="timeline" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="timeline of the incident" xmlns="http://www.w3.org/2000/svg">
<rect x="0" y="0" width="${WIDTH}" height="${height}" class="canvas"/>${ticks.join('')}${grace}${rowLabels}<text class="row-name" x="10" y="${decisionsY + 21}">decisions</text>${bars}${decisions}${lanes}${markLines}
</svg>`;
}

const CSS = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1b1f24; background: #f4f5f7; margin: 0; padding: 24px; }
main { max-width: 1240px; margin: 0 auto; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 0 0 10px; }
.sub { color: #57606a; margin: 0 0 16px; font-size: 14px; }
section { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 16px 20px; margin-bottom: 16px; }
.outcome { display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
.state { font-weight: 700; padding: 2px 10px; border-radius: 12px; border: 2px solid; text-transform: uppercase; font-size: 13px; letter-spacing: .04em; }
.state.done { color: #1a7f37; border-color: #1a7f37; background: #dafbe1; }
.state.bad { color: #b42318; border-color: #b42318; background: #ffebe9; }
.state.open { color: #9a6700; border-color: #9a6700; background: #fff8c5; }
.state.neutral { color: #57606a; border-color: #57606a; background: #f6f8fa; }
.reason { font: 600 15px ui-monospace, "DejaVu Sans Mono", monospace; }
.sentence { margin: 10px 0 0; font-size: 16px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 12px 0 0; }
dl.facts dt { color: #57606a; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
dl.facts pre { margin: 0; font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; white-space: pre-wrap; background: #f6f8fa; padding: 6px 8px; border-radius: 4px; }
.figures { display: grid; grid-template-columns: repeat(4, 1fr); gap: 12px; }
.figure { border: 1px solid #d0d7de; border-radius: 6px; padding: 10px 12px; }
.figure .label { color: #57606a; font-size: 13px; }
.figure .value { font-size: 22px; font-weight: 700; }
svg.timeline { width: 100%; height: auto; display: block; font-family: system-ui, "DejaVu Sans", sans-serif; }
.canvas { fill: #fff; }
.grid { stroke: #eaeef2; }
.tick { font-size: 12px; fill: #57606a; text-anchor: middle; }
.row-name, .lane-name { font-size: 13px; fill: #1b1f24; }
.lane-name.target { font-weight: 700; }
.lane { fill: #f6f8fa; fill-opacity: .5; stroke: #d8dee4; }
.lane.target { fill: #ffebe9; fill-opacity: .6; }
.grace { fill: #f2e8c9; fill-opacity: .55; stroke: #b08800; stroke-dasharray: 4 3; }
.grace-text { font-size: 12px; fill: #7d5e00; font-style: italic; }
.bar { stroke: #1b1f24; stroke-width: .6; }
.bar.probe { fill: #8cb4e6; }
.bar.wait { fill: #f2d98c; }
.bar.retry { fill: #f0a97a; }
.bar.move-leader, .bar.snapshot { fill: #b7a3e0; }
.bar.removal { fill: #e08c8c; }
.bar.election { fill: #9fd4a9; }
.bar.replacement { fill: #c9d1d9; }
.bar.maintenance { fill: #9ed6d0; }
.bar-text { font-size: 11px; fill: #1b1f24; }
.verdict { stroke: #57606a; stroke-width: 1.5; }
.verdict.final { stroke: #1b1f24; stroke-width: 3; }
.mark { stroke: #1b1f24; stroke-width: 1.5; stroke-dasharray: 5 3; }
.mark.removal { stroke: #b42318; stroke-width: 2.5; stroke-dasharray: none; }
.mark.new-leader, .mark.replacement-joined { stroke: #1a7f37; stroke-width: 2; }
.mark-text { font-size: 12px; font-weight: 600; fill: #1b1f24; }
.mark-text.removal { fill: #b42318; }
.mark-text.new-leader, .mark-text.replacement-joined { fill: #1a7f37; }
.ok { fill: #1a7f37; }
.down { fill: #fff; stroke: #b42318; stroke-width: 2; }
.letter { font: 700 11px ui-monospace, "DejaVu Sans Mono", monospace; text-anchor: middle; fill: #fff; }
.down + .letter { fill: #b42318; font-size: 13px; }
.said { font-size: 11px; fill: #1b1f24; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 18px; font-size: 13px; color: #57606a; margin-top: 8px; }
.key { display: inline-block; min-width: 16px; height: 14px; vertical-align: -2px; border: 1px solid #1b1f24; margin-right: 4px; font: 700 10px/12px monospace; text-align: center; color: #fff; }
table.journal { border-collapse: collapse; width: 100%; font-size: 13px; }
table.journal td { border-top: 1px solid #eaeef2; padding: 3px 8px; vertical-align: top; }
table.journal td.at { white-space: nowrap; text-align: right; color: #57606a; font-variant-numeric: tabular-nums; }
table.journal td.step { white-space: nowrap; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
@media print { body { background: #fff; padding: 0; } section { break-inside: avoid; } }
`;

const legend = `<div class="legend">
<span><span class="key" style="background:#1a7f37">D</span>reachable: D direct, P port-forward, X exec relay</span>
<span><span class="key" style="background:#fff;color:#b42318;border-color:#b42318">✕</span>unreachable on every path</span>
<span>→ name tN: whom the member named leader, at which term (said when it changes)</span>
<span><span class="key" style="background:#f2e8c9;border-style:dashed"></span>grace window</span>
<span><span class="key" style="background:#8cb4e6"></span>probe</span>
<span><span class="key" style="background:#f2d98c"></span>wait (spends no attempt)</span>
<span><span class="key" style="background:#f0a97a"></span>retry after a backoff</span>
<span><span class="key" style="background:#9ed6d0"></span>maintenance step (a NOSPACE cleared)</span>
<span>thick tick: the decision that ended the looking; thin: a retry</span>
</div>`;

export function renderReport(m: ReportModel): string {
  const target = m.target.name ? `${m.target.name}${m.target.memberId ? ` (${m.target.memberId})` : ''}` : m.target.key;
  const facts: [string, string][] = [
    ['cluster', m.clusterId],
    ['target', target],
    ['incident', m.incidentId],
    ['reported by', `${m.reportedBy.source}: ${m.reportedBy.reason}${m.reportedBy.observedAt ? ` (observed ${m.reportedBy.observedAt})` : ''}`],
    ['opened', new Date(m.start).toISOString()],
    ['last known', `${new Date(m.end).toISOString()} (+${formatDuration(m.end - m.start)})`],
    ['attempt', String(m.attempt)],
    ['probes', `${m.probes}, every one drawn in the lanes`],
  ];
  const dl = (items: { term: string; value: string; nested?: boolean }[]) =>
    `<dl class="facts">${items.map((i) => `<dt>${esc(i.term)}</dt><dd>${i.nested ? `<pre>${esc(i.value)}</pre>` : esc(i.value)}</dd>`).join('')}</dl>`;
  const figures = m.figures
    .map((f) => `<div class="figure" data-figure="${esc(f.label)}"><div class="label">${esc(f.label)}</div><div class="value">${duration(f.ms)}</div></div>`)
    .join('');
  const maintenance = m.maintenance
    ? `<section data-maintenance="${esc(m.maintenance.runId)}">
<h2>Maintenance</h2>
<p>Run ${esc(m.maintenance.runId)}: <span class="reason">${esc(m.maintenance.state)}</span> (${esc(m.maintenance.reason)})${m.maintenance.message ? `: ${esc(m.maintenance.message)}` : ''}</p>
<table class="journal">${m.maintenance.steps
        .map(
          (s) =>
            `<tr data-step="${esc(s.step)}"><td class="at">+${formatDuration(s.at - m.start)}</td><td class="step">${esc(s.step)}</td><td>${esc(s.outcome)}, ${formatDuration(s.tookMs)}</td><td>${esc(s.words)}</td></tr>`,
        )
        .join('')}</table>
</section>
`
    : '';
  const journal = m.lines
    .map((l) => `<tr><td class="at">+${formatDuration(l.at - m.start)}</td><td class="step">${esc(l.step)}</td><td>${esc(l.words)}</td></tr>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(`Incident ${m.incidentId.slice(0, 8)}: ${target} in ${m.clusterId}, ${m.state}`)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>Incident report: ${esc(target)} in cluster ${esc(m.clusterId)}</h1>
<p class="sub">etcd-remediator, incident ${esc(m.incidentId)}</p>
<section>
<div class="outcome"><span class="state ${stateReading(m.storedState, m.reason).tone}" data-state="${esc(m.state)}">${esc(m.state)}</span><span class="reason" data-reason="${esc(m.reason ?? '')}">${esc(m.reason ?? 'no decision yet')}</span></div>
${m.message ? `<p class="sentence">${esc(m.message)}</p>` : ''}
${dl(facts.map(([term, value]) => ({ term, value })))}
</section>
<section>
<h2>Figures</h2>
<div class="figures">${figures}</div>
</section>
<section>
<h2>Timeline</h2>
${timeline(m)}
${legend}
</section>
${maintenance}<section>
<h2>Evidence</h2>
${m.evidence.length > 0 ? dl(m.evidence) : '<p>None kept.</p>'}
</section>
<section>
<h2>Journal</h2>
<table class="journal">${journal}</table>
</section>
</main>
</body>
</html>
`;
}
