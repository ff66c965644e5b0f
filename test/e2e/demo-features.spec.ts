/**
 * The demo's product features (issue #19) on the built dist/demo in real Chromium, WASM backend: Markdown through
 * marked + DOMPurify with lazily loaded highlight.js (code colouring, copy buttons, tables, a collapsible thinking
 * block, no script from model output), conversations (list, rename, delete, export, undo for New chat) persisted in
 * IndexedDB, per-answer copy and regenerate, the context meter, model info, backend picker and reset settings, and
 * the storage-persistence request. Saves screenshots for docs/ when WEBGGUF_DEMO_SCREENSHOTS=<folder> is set.
 */

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type Page, expect, test } from '@playwright/test';
import { SHARED_DIR } from '../helpers/shared-path.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const DEMO_DIR = process.env.WEBGGUF_DEMO_DIR ?? resolve(REPO_ROOT, 'dist/demo');
const SHOTS = process.env.WEBGGUF_DEMO_SCREENSHOTS;
const MODEL_PATH = '/shared/models/stories260K.gguf';
const LOAD_TIMEOUT = 120_000;

/** A conversation with code, a table, a link and hostile HTML, as a model might write it. */
const ANSWER = [
  '<think>The user wants a loop. JavaScript is fine.</think>',
  'Here is a loop in **JavaScript** (see [MDN](https://developer.mozilla.org/docs/Web/JavaScript)):',
  '',
  '```js',
  'for (let i = 0; i < 3; i++) {',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: markdown sample holding JavaScript source, not a template
  '  console.log(`line ${i}`); // prints three lines',
  '}',
  '```',
  '',
  '| step | value |',
  '|------|-------|',
  '| 1    | `i = 0` |',
  '| 2    | `i = 1` |',
  '',
  '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script>',
].join('\n');

let server: StaticServer;

test.beforeAll(async () => {
  server = await startStaticServer({ '/': DEMO_DIR, '/shared/': SHARED_DIR });
});

test.afterAll(async () => {
  await server?.close();
});

async function openPage(browser: Browser, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await browser.newContext({ viewport, serviceWorkers: 'block' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  return page;
}

/** Writes conversations into the demo's IndexedDB store (idb-keyval: database webgguf-demo, store state). */
async function seed(page: Page, entries: Record<string, unknown>): Promise<void> {
  await page.evaluate(async (records) => {
    const db = await new Promise<IDBDatabase>((ok, fail) => {
      const req = indexedDB.open('webgguf-demo');
      req.onupgradeneeded = () => req.result.createObjectStore('state');
      req.onsuccess = () => ok(req.result);
      req.onerror = () => fail(req.error);
    });
    const tx = db.transaction('state', 'readwrite');
    for (const [k, v] of Object.entries(records)) tx.objectStore('state').put(v, k);
    await new Promise((ok) => (tx.oncomplete = ok));
    db.close();
  }, entries);
}

const conversationRecords = (now: number) => ({
  conversations: [
    { id: 'code', title: 'A loop in JavaScript', updatedAt: now },
    { id: 'story', title: 'A short story', updatedAt: now - 1000 },
  ],
  'conversation:code': [
    { role: 'user', content: 'Write a loop that prints three lines.' },
    { role: 'assistant', content: ANSWER, finish: 'stop' },
  ],
  'conversation:story': [
    { role: 'user', content: 'Once upon a time' },
    { role: 'assistant', content: 'there was a cat.', finish: 'length' },
  ],
  currentConversation: 'code',
});

async function shot(page: Page, name: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

test('Markdown: highlighted code with copy buttons, tables, thinking block, links; model HTML stays text', async ({
  browser,
}) => {
  const page = await openPage(browser);
  await page.goto(server.url(`/?backend=wasm&model=${MODEL_PATH}`));
  await expect(page.locator('body')).toHaveAttribute('data-engine', 'ready', { timeout: LOAD_TIMEOUT });
  await seed(page, conversationRecords(Date.now()));
  await page.reload();
  await expect(page.locator('body')).toHaveAttribute('data-engine', 'ready', { timeout: LOAD_TIMEOUT });
  const answer = page.locator('li.message.assistant').first();
  const code = answer.locator('pre code');
  await expect(code).toHaveAttribute('data-highlighted', 'yes');
  await expect(code.locator('.hljs-keyword').first()).toHaveText(/for|let/);
  await expect(answer.locator('table td')).toHaveCount(4);
  const link = answer.getByRole('link', { name: 'MDN' });
  await expect(link).toHaveAttribute('href', 'https://developer.mozilla.org/docs/Web/JavaScript');
  await expect(link).toHaveAttribute('target', '_blank');
  const thinking = answer.locator('details.thinking');
  await expect(thinking).not.toHaveAttribute('open');
  await thinking.locator('summary').click();
  await expect(thinking).toContainText('JavaScript is fine');
  await expect(answer.locator('img, script')).toHaveCount(0);
  await expect(answer).toContainText('<script>window.__xss=2</script>');
  expect(await page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined();
  await thinking.locator('summary').click();
  await shot(page, 'demo-conversation-code');
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, 'demo-phone');
  await page.setViewportSize({ width: 1280, height: 800 });
  await answer.getByRole('button', { name: 'Copy this code' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('for (let i = 0; i < 3; i++) {');
  await answer.getByRole('button', { name: 'Copy this answer' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(ANSWER);
  await page.context().close();
});

test('conversations: switch, rename, delete, export, undo New chat; regenerate one answer; meter and model info', async ({
  browser,
}) => {
  const page = await openPage(browser);
  await page.goto(server.url(`/?backend=wasm&raw=1&temperature=0&max_tokens=6&model=${MODEL_PATH}`));
  await expect(page.locator('body')).toHaveAttribute('data-engine', 'ready', { timeout: LOAD_TIMEOUT });
  await seed(page, conversationRecords(Date.now()));
  await page.reload();
  await expect(page.locator('body')).toHaveAttribute('data-engine', 'ready', { timeout: LOAD_TIMEOUT });
  const list = page.locator('#conversations');
  await expect(list.locator('li')).toHaveCount(2);
  await expect(list.locator('li[aria-current="true"]')).toContainText('A loop in JavaScript');
  // Switch, then regenerate that one answer.
  await list.getByRole('button', { name: 'A short story', exact: true }).click();
  await expect(page.locator('li.message.assistant')).toHaveText(/there was a cat/);
  await page.getByRole('button', { name: 'Regenerate this answer' }).click();
  await expect(page.locator('li.message.assistant')).toHaveAttribute('data-done', 'true', { timeout: LOAD_TIMEOUT });
  await expect(page.locator('li.message.assistant')).not.toContainText('there was a cat');
  await expect(page.locator('#context-meter')).toHaveText(/^\d+ \/ \d+ tokens$/);
  // Rename, persisted.
  await list.getByRole('button', { name: 'Rename “A short story”' }).click();
  await list.getByRole('textbox', { name: 'New name' }).fill('Cat story');
  await list.getByRole('textbox', { name: 'New name' }).press('Enter');
  await expect(list).toContainText('Cat story');
  // Export Markdown of the open conversation.
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export Markdown' }).click();
  const md = readFileSync(await (await download).path(), 'utf8');
  expect(md).toMatch(/^# Cat story\n\n## You\n\nOnce upon a time\n\n## Assistant\n\n/);
  const jsonDownload = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export JSON' }).click();
  expect(JSON.parse(readFileSync(await (await jsonDownload).path(), 'utf8')).title).toBe('Cat story');
  // New chat, then Undo brings the conversation back.
  await page.locator('#clear').click();
  await expect(page.locator('li.message')).toHaveCount(0);
  await page.getByRole('button', { name: 'Undo' }).click();
  await expect(page.locator('li.message')).toHaveCount(2);
  // Delete asks, then removes; survives a reload.
  await list.getByRole('button', { name: 'Delete “A loop in JavaScript”' }).click();
  await list.getByRole('button', { name: 'Confirm deleting “A loop in JavaScript”' }).click();
  await expect(list.locator('li')).toHaveCount(1);
  await page.reload();
  await expect(page.locator('body')).toHaveAttribute('data-engine', 'ready', { timeout: LOAD_TIMEOUT });
  await expect(page.locator('#conversations li')).toHaveCount(1);
  await expect(page.locator('#conversations')).toContainText('Cat story');
  // Model info and settings.
  const info = page.locator('#model-info');
  await expect(info).toContainText('llama');
  await expect(info).toContainText('WASM');
  await expect(info).toContainText('Chat template');
  await expect(info).toContainText(/Parameters\s*\d+ K/); // stories260K: ~292 K, from the header's tensor table
  await expect(info).toContainText(/Quantization\s*F32/); // no quant in the file name: the tensors' type
  await page.locator('#backend').selectOption('wasm');
  await page.locator('#temperature').fill('1.5');
  await page.locator('#temperature').dispatchEvent('change');
  await page.getByRole('button', { name: 'Reset settings' }).click();
  await expect(page.locator('#temperature')).toHaveValue('0.7');
  await expect(page.locator('#backend')).toHaveValue('auto');
  await expect(page.locator('#persist-status')).not.toBeEmpty();
  await page.context().close();
});

test('first-run card and error state screenshots', async ({ browser }) => {
  const page = await openPage(browser);
  await page.goto(server.url('/'));
  await expect(page.locator('#first-run')).toBeVisible();
  await expect(page.locator('#first-run')).toHaveAttribute('data-capability', /WebGPU|WASM/);
  await shot(page, 'demo-first-run');
  await page.locator('#custom-url').fill('https://huggingface.co/someone/model/blob/main/model.gguf');
  await page
    .context()
    .route('https://huggingface.co/**', (route) => route.fulfill({ status: 404, body: 'Entry not found' }));
  await page.locator('#load-model').click();
  await expect(page.locator('#error .error-summary')).toHaveText('The model file was not found at that address.');
  await page.locator('#error summary').click();
  await shot(page, 'demo-error');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator('#error .dismiss').click();
  await shot(page, 'demo-phone-first-run');
  await page.context().close();
});
