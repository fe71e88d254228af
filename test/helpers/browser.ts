/**
 * A real browser for the tests that look at a page: Debian's `chromium` (installed by
 * scripts/ensure-browser.mjs before the tests; never a downloaded build), driven by
 * playwright-core over the DevTools protocol. Each launch gets a fresh profile directory, removed
 * on close, and the switches that keep a headless browser from reaching anything but the page.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Where Debian installs the browser; EDGESYNC_CHROMIUM names another. */
export const CHROMIUM = process.env.EDGESYNC_CHROMIUM ?? '/usr/bin/chromium';

export interface TestBrowser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const profile = await fs.mkdtemp(path.join(os.tmpdir(), 'edgesync-chromium-'));
  // A persistent context is how a fresh --user-data-dir is given to playwright.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      await fs.rm(profile, { recursive: true, force: true });
    },
  };
}
