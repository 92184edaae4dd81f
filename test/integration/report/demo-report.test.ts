// npm run demo writes the report of its incident and says where; that page, opened in headless
// Chromium, shows the whole seed case to its end (the replacement joined), and its screenshot is
// kept as test-artifacts/demo-report.png for a person to look at.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../cli/support.ts';
import { artifact, launchChromium, reportPage, screenshotTop } from './browser.ts';

const DEMO = fileURLToPath(new URL('../../../infra/cli/demo.ts', import.meta.url));
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The demo as `npm run demo` runs it, its report written into `reportDir`. */
const runDemo = (reportDir: string): Promise<CliRun> => runCli([], { script: DEMO, env: { ETCD_REMEDIATOR_DEMO_REPORT_DIR: reportDir }, timeoutMs: 60_000 });

describe('the demo’s report', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-report-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is written where the demo says, reads in Chromium with nothing fetched, and its screenshot is kept', async () => {
    // Chromium while the demo runs: without it the test still fails, once the demo has ended.
    const [launched, demo] = await Promise.allSettled([launchChromium(), runDemo(dir)]);
    if (launched.status === 'rejected') throw launched.reason;
    const browser = launched.value;
    try {
      if (demo.status === 'rejected') throw demo.reason;
      const { code, stdout, stderr } = demo.value;
      expect(code, `${stdout}\n${stderr}`).toBe(0);
      const [, file] = /^ {3}report: (\S+\.html) /m.exec(stdout) ?? [];
      expect(file, stdout).toBeDefined();
      expect(path.dirname(file!)).toBe(dir);

      const view = await reportPage(browser);
      await view.open(file!);
      const { page } = view;
      expect(await page.locator('[data-state]').textContent()).toBe('completed');
      expect(await page.locator('.reason').textContent()).toBe('LEADER_UNREACHABLE_PAST_GRACE');
      expect(await page.locator('[data-lane]').count()).toBe(3);
      expect(await page.locator('[data-target="true"]').count()).toBe(1);
      for (const kind of ['removal', 'new-leader', 'replacement-joined']) expect(await page.locator(`[data-marker="${kind}"]`).isVisible()).toBe(true);
      expect(await page.locator('[data-grace]').count()).toBe(1);
      // Every figure happened, the replacement's too.
      const figures = await page.locator('[data-figure] .value').allTextContents();
      expect(figures).toHaveLength(4);
      for (const figure of figures) expect(figure).toMatch(/^\d[\d.]*(ms|s)$/);
      expect(view.outside).toEqual([]);

      const png = await screenshotTop(page, artifact('demo-report.png'));
      const kept = fs.readFileSync(artifact('demo-report.png'));
      expect(kept.equals(png)).toBe(true);
      expect(kept.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
      // IHDR: the width and height, big-endian, after the signature and the chunk's length and type.
      expect(kept.readUInt32BE(16)).toBe(1280);
      expect(kept.readUInt32BE(20)).toBeGreaterThan(800);
      expect(kept.length).toBeGreaterThan(50_000);
    } finally {
      await browser.close();
    }
  });
});
