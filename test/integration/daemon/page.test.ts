/**
 * The status page (`GET /`) in a real browser: a daemon with a scripted reconcile step serves it,
 * headless Chromium loads it, and the test reads what a person would see. It checks that the page
 * draws every resource state, drift as field paths, errors at file:line and the events; that it
 * refreshes itself from /status; that text from the status (reasons, messages) is shown as text,
 * never run as markup; that it loads nothing but its own origin and breaks no rule of its
 * Content-Security-Policy. With EDGESYNC_SCREENSHOT=1 it also saves docs/status-page.png.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDaemon, type Daemon } from '../../../src/daemon/daemon.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import { PAGE_REFRESH_MS } from '../../../src/daemon/page.js';
import type { ReconcileReport } from '../../../src/daemon/types.js';
import { launchBrowser, type TestBrowser } from '../../helpers/browser.js';
import { makeTempDir, recorder, removeDir, waitFor } from './helpers.js';

const HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';

/** A cycle that applied two writes and left drift, a guard, a conflict and a warning. */
const DRIFTED: ReconcileReport = {
  result: 'drift',
  summary: { create: 0, update: 2, delete: 1, adopt: 0, noop: 4 },
  writes: 2,
  outOfSync: 1,
  managed: { tls_edge: 1, https_edge: 4, bot_user: 1, cloud_endpoint: 1 },
  warnings: ['2 bot users are named ci; the first one is managed'],
  diagnostics: [
    {
      file: 'MANIFESTS/edges/storefront.yaml',
      line: 14,
      column: 9,
      path: 'routes[1].oauth.provider.google.scopes',
      message: 'scope "profile" is already implied by "openid"',
      severity: 'warning',
    },
  ],
  resources: {
    changes: [
      {
        address: 'https_edge.storefront',
        kind: 'https_edge',
        action: 'update',
        reason: 'the live edge differs from its manifest',
        id: 'edghts_2Zq8Lk1vFgP0aXw3',
        fields: ['description', 'routes["/api"].oauth.provider.google.client_secret'],
      },
    ],
    blocked: [
      {
        address: 'https_edge.legacy-admin',
        kind: 'guard',
        reason: 'delete held back: more than --max-deletes (10) edges would be deleted',
      },
      {
        address: 'https_edge.partner-portal',
        kind: 'conflict',
        reason: 'owned by another controller (edgesync/owner: team-payments)',
      },
    ],
    noop: [
      { address: 'tls_edge.mqtt-gateway', kind: 'tls_edge', id: 'edgtls_2Zq8M0c4nVtUo1aB' },
      { address: 'https_edge.docs', kind: 'https_edge', id: 'edghts_2Zq8M2sQe7WcY5dK' },
      {
        address: 'cloud_endpoint.checkout',
        kind: 'cloud_endpoint',
        id: 'ep_2Zq8M3aTf9XnR6gL',
      },
      { address: 'bot_user.ci-deployer', kind: 'bot_user', id: 'bot_2Zq8M5hJp2KvD8wN' },
    ],
  },
};

/** The next cycle: the set became invalid. */
const INVALID: ReconcileReport = {
  result: 'invalid',
  summary: { create: 0, update: 0, delete: 0, adopt: 0, noop: 0 },
  writes: 0,
  diagnostics: [
    {
      file: 'MANIFESTS/edges/storefront.yaml',
      line: 12,
      column: 7,
      path: 'routes[0].match_type',
      message: `unknown match type "prefix" ${HOSTILE}`,
      severity: 'error',
    },
  ],
};

let browser: TestBrowser;
let daemon: Daemon | undefined;
let tmp: string | undefined;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await removeDir(tmp);
  tmp = undefined;
});

async function startDaemon(reports: readonly ReconcileReport[]) {
  tmp = await makeTempDir('daemon-page');
  const dir = path.join(tmp, 'manifests');
  await fs.mkdir(dir, { recursive: true });
  const withDir = (r: ReconcileReport): ReconcileReport => ({
    ...r,
    diagnostics: r.diagnostics?.map((d) => ({ ...d, file: d.file.replace('MANIFESTS', dir) })),
  });
  const { calls, reconcile } = recorder((_input, i) =>
    withDir(reports[Math.min(i, reports.length - 1)] as ReconcileReport),
  );
  daemon = createDaemon({
    dir,
    listen: { host: '127.0.0.1', port: 0 },
    watch: false,
    intervalMs: 3_600_000,
    metrics: createDaemonMetrics({ defaultMetrics: false }),
    reconcile,
  });
  await daemon.start();
  await waitFor('the startup cycle', () => daemon?.status().last_reconcile !== null);
  return { calls, base: `http://127.0.0.1:${daemon.address?.port}` };
}

/** A page that records what it requested and every console error (CSP violations among them). */
async function openPage(base: string) {
  const page = await browser.context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.clock.install();
  await page.goto(`${base}/`);
  return { page, requests, errors };
}

/**
 * The little of the browser's globals the functions below use: they run in the page, and the
 * tests are compiled without the DOM's types. Functions, not strings: the page's policy forbids
 * eval, and playwright evaluates a string with it.
 */
interface PageGlobals {
  readonly pwned?: unknown;
  readonly document: {
    readonly body: { getAttribute(name: string): string | null };
    getElementById(id: string): { readonly textContent: string | null } | null;
  };
}

/** Waits until the page has drawn the status `times` times. */
async function loaded(page: Page, times = 1): Promise<void> {
  await page.waitForFunction(
    (n) =>
      Number((globalThis as unknown as PageGlobals).document.body.getAttribute('data-loads')) >= n,
    times,
  );
}

/** What the hostile text would set if any of it ran. */
function pwned(page: Page): Promise<unknown> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).pwned);
}

async function rows(page: Page): Promise<Record<string, string>> {
  return page.$$eval('#resources tbody tr', (trs) =>
    Object.fromEntries(
      trs.map((tr) => [
        tr.querySelector('td:nth-child(1)')?.textContent ?? '',
        tr.querySelector('td:nth-child(2)')?.textContent ?? '',
      ]),
    ),
  );
}

describe('the status page', () => {
  it('is one self-contained document under a strict Content-Security-Policy', async () => {
    const { base } = await startDaemon([DRIFTED]);
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    expect(html).not.toMatch(/https?:\/\//);
    expect((await fetch(`${base}/`, { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(`${base}/`, { method: 'POST' })).status).toBe(405);
  });

  it('shows each resource state, drift as field paths, warnings at file:line and the events', async () => {
    const { base } = await startDaemon([DRIFTED]);
    const { page, requests, errors } = await openPage(base);
    await loaded(page);
    expect(await rows(page)).toEqual({
      'bot_user.ci-deployer': 'in sync',
      'cloud_endpoint.checkout': 'in sync',
      'https_edge.docs': 'in sync',
      'https_edge.legacy-admin': 'waiting',
      'https_edge.partner-portal': 'waiting',
      'https_edge.storefront': 'drifted',
      'tls_edge.mqtt-gateway': 'in sync',
    });
    const text = await page.innerText('main');
    expect(text).toContain('update: the live edge differs from its manifest');
    expect(text).toContain(
      '~ routes["/api"].oauth.provider.google.client_secret (value not shown)',
    );
    expect(text).toContain(
      'edges/storefront.yaml:14:9 warning routes[1].oauth.provider.google.scopes:',
    );
    expect(text).toContain('2 bot users are named ci; the first one is managed');
    expect(await page.innerText('#cards')).toContain('drift');
    expect(await page.innerText('#events')).toContain('https_edge.storefront');
    expect(await page.isHidden('#dns-section')).toBe(true);

    if (process.env.EDGESYNC_SCREENSHOT === '1') {
      await page.screenshot({
        path: path.resolve(import.meta.dirname, '../../../docs/status-page.png'),
        fullPage: true,
      });
    }
    expect(requests.every((u) => u.startsWith(`${base}/`))).toBe(true);
    expect(requests).toEqual(expect.arrayContaining([`${base}/status`, `${base}/events`]));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refreshes itself: a later cycle shows without a reload', async () => {
    const { base } = await startDaemon([DRIFTED, INVALID]);
    const { page, errors } = await openPage(base);
    await loaded(page);
    expect((await rows(page))['https_edge.storefront']).toBe('drifted');

    daemon?.trigger('manual');
    await waitFor('the invalid cycle', () => daemon?.status().last_reconcile?.result === 'invalid');
    await page.clock.runFor(PAGE_REFRESH_MS);
    await loaded(page, 2);
    const after = await rows(page);
    expect(after['https_edge.storefront']).toBe('error');
    expect(after['https_edge.docs']).toBe('in sync');
    const errorsText = await page.innerText('#errors');
    expect(errorsText).toContain('edges/storefront.yaml:12:7 error routes[0].match_type:');
    // The hostile message is shown as the text it is, and nothing of it runs.
    expect(errorsText).toContain(`unknown match type "prefix" ${HOSTILE}`);
    expect(await pwned(page)).toBeUndefined();
    expect(await page.$$('main img, main script')).toEqual([]);
    expect(await page.innerText('#events')).toContain('invalid');

    daemon?.suspend();
    await page.clock.runFor(PAGE_REFRESH_MS);
    await loaded(page, 3);
    expect(await page.innerText('#mode')).toBe('suspended');
    expect(await pwned(page)).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('lists the DNS records a domain still needs when the status has them, as text', async () => {
    const { base } = await startDaemon([DRIFTED]);
    const page = await browser.context.newPage();
    await page.clock.install();
    // The status as a daemon that knows domains would serve it.
    await page.route(`${base}/status`, async (route) => {
      const res = await route.fetch();
      const status = (await res.json()) as Record<string, unknown>;
      await route.fulfill({
        response: res,
        json: {
          ...status,
          domains: [
            {
              domain: 'shop.example.com',
              dns_records: [{ type: 'CNAME', name: 'shop.example.com', value: HOSTILE }],
            },
          ],
        },
      });
    });
    await page.goto(`${base}/`);
    await page.waitForSelector('#dns-section:not([hidden])');
    const text = await page.innerText('#dns');
    expect(text).toContain('shop.example.com');
    expect(text).toContain(`type CNAME name shop.example.com value ${HOSTILE}`);
    expect(await pwned(page)).toBeUndefined();
    await page.close();
  });

  it('says so when the status cannot be read, and keeps trying', async () => {
    const { base } = await startDaemon([DRIFTED]);
    const { page } = await openPage(base);
    await loaded(page);
    await daemon?.stop();
    daemon = undefined;
    await page.clock.runFor(PAGE_REFRESH_MS);
    await page.waitForFunction(
      () =>
        (globalThis as unknown as PageGlobals).document.getElementById('notice')?.textContent !==
        '',
    );
    expect(await page.innerText('#notice')).toMatch(/^Cannot read the status: .+\. Retrying\.$/);
    await page.close();
  });
});
