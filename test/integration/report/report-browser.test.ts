// The incident report as a person opens it: three real incidents on one lab (blocked, recovered,
// remediated), each written by `report` from its state file and loaded in headless Chromium from a
// file:// URL with every other request failed and counted. The lanes, the marks, the reason and
// the figures must be there and visible; and a member named <script> is text, never run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { membersSeen } from '../../../functions/core/incident/journal.ts';
import { startLab, type Lab } from '../../../infra/lab/lab.ts';
import { reportModel } from '../../../infra/cli/report/report-model.ts';
import { renderReport } from '../../../infra/cli/report/report-page.ts';
import { jsonOf, killService, runCli, startCli, type Service } from '../cli/support.ts';
import { cluster, id } from '../../unit/core/fixtures.ts';
import { artifact, launchChromium, reportPage, screenshotTop, type ReportPage } from './browser.ts';

interface Made {
  incidentId: string;
  html: string;
}

describe.sequential('the incident report in headless Chromium', () => {
  let lab: Lab | undefined;
  let browser: Browser | undefined;
  let service: Service | undefined;
  let view: ReportPage;
  let dir: string;
  let leader: { name: string; id: string };
  const made: Record<'blocked' | 'recovered' | 'remediated', Made> = {} as never;

  /** remediate's common flags, on its own state file. */
  const remediate = (name: string, more: string[]) => [
    'remediate',
    '--endpoints',
    lab!.endpoints().join(','),
    '--election-timeout',
    '500ms',
    '--timeout',
    '1s',
    '--backoff',
    '300ms',
    '--state',
    path.join(dir, `${name}.sqlite`),
    '--target',
    leader.name,
    '--json',
    ...more,
  ];

  /** `report` by a prefix of the id, as a person types it. */
  async function report(name: keyof typeof made, incidentId: string): Promise<void> {
    const html = path.join(dir, `${name}.html`);
    const written = await runCli(['report', incidentId.slice(0, 8), '--state', path.join(dir, `${name}.sqlite`), '--out', html]);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toBe(`report of incident ${incidentId} written to ${html}\n`);
    made[name] = { incidentId, html };
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'report-browser-'));
    // Chromium and the lab at once: without Chromium the file still fails before any incident is
    // made, and the lab started beside it is taken down after.
    const [launched, started] = await Promise.allSettled([launchChromium(), startLab({ members: 3, electionTimeoutMs: 500 })]);
    if (started.status === 'fulfilled') lab = started.value;
    if (launched.status === 'rejected') throw launched.reason;
    browser = launched.value;
    if (started.status === 'rejected') throw started.reason;
    const opened = reportPage(browser);
    leader = await lab!.leader();
    await lab!.fault(leader.name, 'cut');

    // Blocked and recovered at once, each on its own state file. Blocked: the leader unreachable
    // past its grace window, and removing a leader without a move is off. Recovered: the leader
    // answers again inside a long grace window, healed once blocked has ended.
    service = startCli(remediate('recovered', ['--grace', '60s']));
    const blocked = await runCli(remediate('blocked', ['--grace', '1s', '--no-skip-leader-move']));
    expect(blocked.code, blocked.stderr).toBe(3);
    await service.waitForStderr(/RetryRequested\s+LEADER_UNREACHABLE\b/, 20_000);
    await lab!.fault(leader.name, 'heal');
    expect(await service.exited, service.stderr()).toBe(5);
    const recovered = jsonOf<{ incidentId: string }>({ code: 5, stdout: service.stdout(), stderr: service.stderr() }).incidentId;

    // Remediated: the seed case, removed without a move past a short grace window, while the
    // reports of the two before it are written.
    await lab!.fault(leader.name, 'cut');
    const [removed] = await Promise.all([
      runCli(remediate('remediated', ['--grace', '2s']), { timeoutMs: 40_000 }),
      report('blocked', jsonOf<{ incidentId: string }>(blocked).incidentId),
      report('recovered', recovered),
    ]);
    expect(removed.code, removed.stderr).toBe(6);
    await report('remediated', jsonOf<{ incidentId: string }>(removed).incidentId);
    view = await opened;
  }, 90_000);

  afterAll(async () => {
    await killService(service);
    await browser?.close();
    await lab?.down();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** What the page shows, read from the rendered DOM. */
  async function shown(name: keyof typeof made) {
    await view.open(made[name].html);
    const { page } = view;
    const text = async (selector: string) => ((await page.locator(selector).first().textContent()) ?? '').trim();
    const lanes = page.locator('[data-lane]');
    const laneNames = await lanes.locator('.lane-name').allTextContents();
    for (const name of await lanes.locator('.lane-name').all()) expect(await name.isVisible()).toBe(true);
    const figures: Record<string, string> = {};
    for (const f of await page.locator('[data-figure]').all())
      figures[(await f.getAttribute('data-figure')) ?? ''] = ((await f.locator('.value').textContent()) ?? '').trim();
    await screenshotTop(page, artifact(`report-${name}.png`));
    return {
      page,
      state: await text('[data-state]'),
      reason: await text('.reason'),
      laneNames,
      target: await text('[data-target="true"] .lane-name'),
      removal: page.locator('[data-marker="removal"]'),
      grace: page.locator('[data-grace]'),
      figures,
    };
  }

  it('a remediated incident: a lane per member, the removal marked, its reason, every figure but the replacement', async () => {
    const s = await shown('remediated');
    expect(s.state).toBe('awaiting-replacement');
    expect(s.reason).toBe('LEADER_UNREACHABLE_PAST_GRACE');
    expect(s.laneNames.map((n) => n.replace(' ◆ target', '')).sort()).toEqual(lab!.members.map((m) => m.name).sort());
    expect(s.target).toBe(`${leader.name} ◆ target`);
    expect(await s.removal.count()).toBe(1);
    expect(await s.removal.isVisible()).toBe(true);
    expect(await s.page.locator('[data-marker="new-leader"]').count()).toBe(1);
    expect(await s.grace.count()).toBe(1);
    expect(s.figures['event → decision']).toMatch(/^\d[\d.]*(ms|s)$/);
    expect(s.figures['event → removal']).toMatch(/^\d[\d.]*(ms|s)$/);
    expect(s.figures['event → new leader']).toMatch(/^\d[\d.]*(ms|s)$/);
    expect(s.figures['event → replacement joined']).toBe('—');
    // Drawn on one time axis: the removal after the target's last probe, the new leader after the removal.
    const xOf = async (selector: string) => {
      const box = await s.page.locator(selector).last().boundingBox();
      expect(box, selector).not.toBeNull();
      return box!.x + box!.width / 2;
    };
    const removedAt = await xOf('[data-marker="removal"] line');
    expect(removedAt).toBeGreaterThan(await xOf('[data-target="true"] [data-reachable]'));
    expect(await xOf('[data-marker="new-leader"] line')).toBeGreaterThan(removedAt);
    // The target was unreachable at every probe kept, the others answered on the direct path.
    expect(await s.page.locator('[data-target="true"] [data-reachable="true"]').count()).toBe(0);
    expect(await s.page.locator('[data-lane]:not([data-target]) [data-path="direct"]').count()).toBeGreaterThan(0);
    expect(view.outside).toEqual([]);
  });

  it('a blocked incident: its reason and the grace window, no removal, the figures after the decision "—"', async () => {
    const s = await shown('blocked');
    expect(s.state).toBe('blocked');
    expect(s.reason).toBe('REMOVE_WITHOUT_MOVE_DISABLED');
    expect(s.laneNames).toHaveLength(3);
    expect(await s.removal.count()).toBe(0);
    expect(await s.grace.count()).toBe(1);
    expect(s.figures['event → decision']).toMatch(/^\d[\d.]*(ms|s)$/);
    expect([s.figures['event → removal'], s.figures['event → new leader'], s.figures['event → replacement joined']]).toEqual(['—', '—', '—']);
    expect(view.outside).toEqual([]);
  });

  it('a recovered incident: TARGET_RECOVERED, the target answering again at the last probe, nothing removed', async () => {
    const s = await shown('recovered');
    expect(s.state).toBe('recovered');
    expect(s.reason).toBe('TARGET_RECOVERED');
    expect(s.laneNames).toHaveLength(3);
    expect(await s.removal.count()).toBe(0);
    expect(await s.grace.count()).toBe(1);
    const target = s.page.locator('[data-target="true"] [data-reachable]');
    expect(await target.first().getAttribute('data-reachable')).toBe('false');
    expect(await target.last().getAttribute('data-reachable')).toBe('true');
    expect(s.figures['event → removal']).toBe('—');
    expect(view.outside).toEqual([]);
  });

  it('the guard itself: a page that reaches outside is caught, so the counts above mean something', async () => {
    const file = path.join(dir, 'reaching.html');
    fs.writeFileSync(file, '<!doctype html><link rel="stylesheet" href="http://127.0.0.1:9/font.css"><img src="https://example.invalid/x.png">');
    const before = view.outside.length;
    await view.open(file);
    await expect.poll(() => view.outside.length - before, { timeout: 5_000 }).toBe(2);
    view.outside.splice(before);
  });

  it('a member named <script> is shown as its name and never run', async () => {
    const evil = '<script>window.ran = true</script>';
    const views = [cluster(Date.now(), 3, { leader: 0 })].map((v) => ({ ...v, members: v.members.map((m) => (m.id === id(1) ? { ...m, name: evil } : m)) }));
    const file = path.join(dir, 'evil.html');
    const now = Date.now();
    fs.writeFileSync(
      file,
      renderReport(
        reportModel({
          incident: {
            incidentId: 'e',
            clusterId: evil,
            targetKey: 'memberName=etcd-0',
            target: {},
            reason: evil,
            state: 'open',
            openedAt: now,
            updatedAt: now,
            attempt: 0,
            waits: 0,
            immediateReprobes: 0,
            views,
            outbox: [],
            stepsDone: [],
            version: 1,
          },
          // The lanes are drawn from the probe lines: one, which saw the member so named.
          journal: [
            {
              at: now,
              step: 'probed',
              detail: { answered: 3, members: 3, leader: 'agreed', listFailures: [], seen: membersSeen(views[0]!) },
              isStepMarker: false,
            },
          ],
        }),
      ),
    );
    await view.open(file);
    expect(await view.page.evaluate(() => 'ran' in globalThis)).toBe(false);
    expect(await view.page.locator('[data-lane] .lane-name').allTextContents()).toContain(evil);
    expect(await view.page.locator('h1').textContent()).toContain(evil);
    expect(view.outside).toEqual([]);
  });
});
