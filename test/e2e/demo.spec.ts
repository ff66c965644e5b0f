/**
 * The built demo chat (dist/demo, from `npm run build`) in real Chromium, served with COOP/COEP next to the shared
 * fixtures: loads stories260K by URL and answers greedily exactly like llama.cpp; a reload loads the model from
 * IndexedDB with zero requests for it; offline, the service worker serves the app and generation still works; a
 * stopped answer can be regenerated; `?backend=wasm` works, and edit-and-resend reuses the prompt cache; screenshots
 * at desktop and phone sizes, light and dark; a slow download shows speed and ETA, pauses, and resumes after a reload.
 * The tests run in order in one browser context (they share its IndexedDB and service worker).
 */

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, type Page, expect, test } from '@playwright/test';
import { SHARED_DIR, sharedPath } from '../helpers/shared-path.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const DEMO_DIR = resolve(REPO_ROOT, 'dist/demo');
const MODEL_PATH = '/shared/models/stories260K.gguf';
const REFERENCE = JSON.parse(readFileSync(sharedPath('models', 'stories260K.reference.json'), 'utf8')) as {
  prompt: string;
  greedy_kv_f32: { n: number; text: string };
};
/** Generous: SwiftShader compiles each WebGPU kernel in seconds. */
const LOAD_TIMEOUT = 180_000;

let server: StaticServer;
let context: BrowserContext;
let page: Page;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ browser }) => {
  if (!existsSync(resolve(DEMO_DIR, 'index.html')))
    throw new Error(`${DEMO_DIR} is missing: run \`npm run build\` first`);
  server = await startStaticServer({ '/': DEMO_DIR, '/shared/': SHARED_DIR });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') console.log(`[page ${m.type()}] ${m.text()}`);
  });
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
});

test.afterAll(async () => {
  await context?.close();
  await server?.close();
});

/** The demo URL loading the fixture in text-completion mode with greedy sampling. */
function demoUrl(extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({
    model: MODEL_PATH,
    raw: '1',
    temperature: '0',
    max_tokens: String(REFERENCE.greedy_kv_f32.n),
    ...extra,
  });
  return server.url(`/?${q}`);
}

async function waitForEngine(p: Page): Promise<string> {
  await expect(p.locator('body')).toHaveAttribute('data-engine', 'ready', { timeout: LOAD_TIMEOUT });
  const badge = (await p.locator('#backend-badge').textContent()) ?? '';
  console.log(`backend: ${badge} — ${await p.locator('#backend-badge').getAttribute('title')}`);
  return badge;
}

/** Starts a new chat, sends `text` from the keyboard and returns the finished answer's element. */
async function ask(p: Page, text: string) {
  await p.locator('#clear').click();
  await p.locator('#prompt').fill(text);
  await p.locator('#prompt').press('Enter');
  const answer = p.locator('li.message.assistant').last();
  await expect(answer).toHaveAttribute('data-done', 'true', { timeout: LOAD_TIMEOUT });
  return answer;
}

async function answerText(p: Page): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: innerText() is the rendered text the user reads, which is what this checks
  return (await p.locator('li.message.assistant').last().locator('.content').innerText()).trim();
}

test('loads stories260K by URL with progress and answers greedily like llama.cpp', async () => {
  await page.goto(demoUrl());
  await waitForEngine(page);
  expect(await page.locator('#download').getAttribute('data-state')).toBe('done');
  expect(await page.locator('#download-progress').evaluate((el) => (el as HTMLProgressElement).value)).toBe(1);
  expect(server.requestsFor(MODEL_PATH).length).toBeGreaterThan(0);
  await expect(page.locator('#cached-models')).toContainText('stories260K.gguf');
  await ask(page, REFERENCE.prompt);
  expect(await answerText(page)).toBe(REFERENCE.greedy_kv_f32.text.trim());
  await expect(page.locator('#stats')).toContainText('tok/s');
  await expect(page.locator('#stats')).toContainText('first token');
});

test('a second tab reuses the model the first one loaded (one SharedWorker engine), and both answer', async () => {
  const hasGpu = await page.evaluate(() => 'gpu' in navigator);
  const hosting = await page.locator('body').getAttribute('data-hosting');
  console.log(`first tab: hosting ${hosting}, navigator.gpu ${hasGpu}`);
  expect(hosting).toBe(hasGpu ? 'shared' : 'dedicated');
  test.skip(!hasGpu, 'no WebGPU in this Chromium: the demo keeps WASM in a dedicated worker per tab');
  const second = await context.newPage();
  try {
    server.log.length = 0;
    await second.goto(demoUrl());
    await waitForEngine(second);
    await expect(second.locator('body')).toHaveAttribute('data-hosting', 'attached');
    expect(server.requestsFor(MODEL_PATH)).toHaveLength(0); // no second download, no second load
    await ask(second, REFERENCE.prompt);
    expect(await answerText(second)).toBe(REFERENCE.greedy_kv_f32.text.trim());
  } finally {
    await second.close();
  }
  // Closing the second tab leaves the first one's engine working.
  await ask(page, REFERENCE.prompt);
  expect(await answerText(page)).toBe(REFERENCE.greedy_kv_f32.text.trim());
});

test('a reload takes the model from IndexedDB with zero requests for it, and keeps the conversation', async () => {
  server.log.length = 0;
  await page.reload();
  await waitForEngine(page);
  expect(server.requestsFor(MODEL_PATH)).toHaveLength(0);
  await expect(page.locator('li.message')).toHaveCount(2);
  expect(await answerText(page)).toBe(REFERENCE.greedy_kv_f32.text.trim());
});

test('offline: the service worker serves the app and generation still works', async () => {
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  await expect
    .poll(() => page.evaluate(() => navigator.serviceWorker.controller !== null), { timeout: 30_000 })
    .toBe(true);
  await context.setOffline(true);
  try {
    server.log.length = 0;
    await page.reload();
    await waitForEngine(page);
    await ask(page, REFERENCE.prompt);
    expect(await answerText(page)).toBe(REFERENCE.greedy_kv_f32.text.trim());
    // Chromium's service-worker update check (GET /sw.js) ignores the offline emulation; nothing else may reach us.
    expect(server.log.filter((r) => r.path !== '/sw.js')).toEqual([]);
  } finally {
    await context.setOffline(false);
  }
});

test('stop mid-stream, then generate again', async () => {
  await page.locator('#max-tokens').fill('2000');
  await page.locator('#max-tokens').dispatchEvent('change');
  await page.locator('#clear').click();
  await page.locator('#prompt').fill(REFERENCE.prompt);
  await page.locator('#send').click();
  const answer = page.locator('li.message.assistant').last();
  await expect(answer.locator('.content')).not.toBeEmpty({ timeout: LOAD_TIMEOUT });
  await page.keyboard.press('Escape');
  await expect(answer).toHaveAttribute('data-done', 'true', { timeout: 60_000 });
  const finish = await answer.getAttribute('data-finish');
  // biome-ignore lint/performance/useDomNodeTextContent: innerText() is the rendered text the user reads, which is what this checks
  const shown = (await answer.locator('.content').innerText()).length;
  console.log(`stopped answer ended with '${finish}' after ${shown} characters`);
  expect(finish).toBe('aborted');
  await expect(page.locator('#error')).toBeHidden();
  await page.locator('#max-tokens').fill(String(REFERENCE.greedy_kv_f32.n));
  await page.locator('#max-tokens').dispatchEvent('change');
  await page.locator('#regenerate').click();
  const again = page.locator('li.message.assistant').last();
  await expect(again).toHaveAttribute('data-done', 'true', { timeout: LOAD_TIMEOUT });
  expect(await answerText(page)).toBe(REFERENCE.greedy_kv_f32.text.trim());
  await expect(page.locator('#stats')).toContainText('reused from cache');
});

test('?backend=wasm forces the WASM backend and gives the same answer', async () => {
  await page.goto(demoUrl({ backend: 'wasm' }));
  const badge = await waitForEngine(page);
  expect(badge).toMatch(/^WASM/);
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  await ask(page, REFERENCE.prompt);
  expect(await answerText(page)).toBe(REFERENCE.greedy_kv_f32.text.trim());
  // Edit-and-resend: the message returns to the composer, the conversation is cut there, the same prompt's KV is reused.
  await page.locator('li.message.user').last().getByRole('button', { name: 'Edit this message and resend' }).click();
  await expect(page.locator('#prompt')).toHaveValue(REFERENCE.prompt);
  await expect(page.locator('li.message')).toHaveCount(0);
  await page.locator('#prompt').press('Enter');
  await expect(page.locator('li.message.assistant').last()).toHaveAttribute('data-done', 'true', {
    timeout: LOAD_TIMEOUT,
  });
  expect(await answerText(page)).toBe(REFERENCE.greedy_kv_f32.text.trim());
  await expect(page.locator('#stats')).toContainText(/prompt 5 tokens, [1-9]\d* reused from cache/);
});

test('screenshots of the chat at desktop and phone sizes, light and dark', async ({}, testInfo) => {
  const shots: [string, { width: number; height: number }][] = [
    ['desktop', { width: 1280, height: 800 }],
    ['phone', { width: 390, height: 844 }],
  ];
  await page.locator('#system-prompt').fill('You are a storyteller.');
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [name, size] of shots) {
      await page.setViewportSize(size);
      const path = testInfo.outputPath(`chat-${name}-${scheme}.png`);
      await page.screenshot({ path });
      await testInfo.attach(`chat-${name}-${scheme}`, { path, contentType: 'image/png' });
    }
  }
  // Phone layout: the sidebar is a drawer, opened and closed from the keyboard.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator('#toggle-sidebar').focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('#sidebar')).toBeVisible();
  const path = testInfo.outputPath('chat-phone-sidebar.png');
  await page.screenshot({ path });
  await testInfo.attach('chat-phone-sidebar', { path, contentType: 'image/png' });
  await page.keyboard.press('Escape');
});

test('download progress shows speed and time left; pause, reload and resume', async ({}, testInfo) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const slowModel = `${MODEL_PATH}?throttle=1`;
  await page.goto(server.url(`/?${new URLSearchParams({ model: slowModel, raw: '1' })}`));
  const text = page.locator('#download-text');
  await expect(text).toContainText('/s', { timeout: 30_000 });
  await expect(text).toContainText('left');
  console.log(`progress: ${await text.textContent()}`);
  await page.screenshot({ path: testInfo.outputPath('download-progress.png') });
  await page.locator('#pause-download').click();
  await expect(page.locator('#download')).toHaveAttribute('data-state', 'paused');
  await expect(page.locator('#pause-download')).toHaveText('Resume');
  await expect(page.locator('#cached-models')).toContainText('partial');
  // After a reload (no ?model=), the last model's partial download is offered for resumption.
  await page.goto(server.url('/?raw=1'));
  await expect(page.locator('#download')).toHaveAttribute('data-state', 'paused', { timeout: 30_000 });
  await page.locator('#pause-download').click();
  await waitForEngine(page);
  await expect(page.locator('#cached-models li')).toHaveCount(2);
});
