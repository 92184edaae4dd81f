// Headless Chromium for the report's browser tests: Debian's chromium, driven by playwright-core.
// A page loads a report from a file:// URL with every other request failed and counted, so a page
// that reached for anything outside itself is caught.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';

/** Fails with how to install it, never skips: a report never checked in a browser must not pass. */
export async function launchChromium(): Promise<Browser> {
  if (!fs.statSync(CHROMIUM, { throwIfNoEntry: false })?.isFile())
    throw new Error(`no Chromium at ${CHROMIUM}: the report's browser tests need it (apt-get install -y chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

export interface ReportPage {
  page: Page;
  /** Every request the page made that was not for a file: each was failed. */
  outside: string[];
  open(file: string): Promise<void>;
}

export async function reportPage(browser: Browser): Promise<ReportPage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  const outside: string[] = [];
  await page.route('**', async (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    outside.push(url);
    return route.abort();
  });
  return {
    page,
    outside,
    open: async (file) => {
      await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    },
  };
}

/** A file under test-artifacts/ at the repository's root (kept out of git), its folder made. */
export function artifact(name: string): string {
  const dir = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url));
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}

/** The page down to the end of its timeline (the journal below it runs long): what a person reads first. */
export async function screenshotTop(page: Page, file: string): Promise<Buffer> {
  const box = await page.locator('section', { has: page.locator('svg.timeline') }).boundingBox();
  if (!box) throw new Error('the report has no timeline section to screenshot');
  return page.screenshot({
    path: file,
    fullPage: true,
    clip: { x: 0, y: 0, width: page.viewportSize()?.width ?? 1280, height: Math.ceil(box.y + box.height + 16) },
  });
}
