/**
 * The demo as an installable PWA (built dist/demo): Chromium reports no installability errors (manifest, icons,
 * service worker with a fetch handler), and on a static host that sends no COOP/COEP the service worker adds them,
 * so after one automatic reload the page is cross-origin isolated (WASM threads available).
 */

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const DEMO_DIR = resolve(REPO_ROOT, 'dist/demo');

let server: StaticServer;

test.beforeAll(async () => {
  if (!existsSync(resolve(DEMO_DIR, 'index.html'))) throw new Error(`${DEMO_DIR} is missing: run \`npm run build\` first`);
  server = await startStaticServer({ '/': DEMO_DIR }, { isolation: false });
});

test.afterAll(async () => {
  await server?.close();
});

test('without COOP/COEP from the host, the service worker isolates the page after one reload; it is installable', async ({ page, context }) => {
  let navigations = 0;
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame()) navigations++;
  });
  await page.goto(server.url('/'));
  // The evaluation may land during the automatic reload; that counts as "not yet".
  await expect.poll(() => page.evaluate(() => crossOriginIsolated).catch(() => false), { timeout: 30_000 }).toBe(true);
  await page.waitForLoadState();
  expect(navigations).toBe(2);
  expect(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL)).toBe(server.url('/sw.js'));

  const manifest = (await (await page.request.get(server.url('/manifest.webmanifest'))).json()) as {
    icons: { src: string; sizes: string }[];
    display: string;
    start_url: string;
  };
  expect(manifest.display).toBe('standalone');
  for (const size of ['192x192', '512x512']) {
    const icon = manifest.icons.find((i) => i.sizes === size);
    expect(icon, size).toBeDefined();
    expect((await page.request.get(server.url(icon!.src))).status()).toBe(200);
  }
  const cdp = await context.newCDPSession(page);
  const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: { errorId: string }[] };
  // Playwright's contexts are incognito, where Chromium never offers installation; every other check must pass.
  expect(installabilityErrors.filter((e) => e.errorId !== 'in-incognito')).toEqual([]);
});
