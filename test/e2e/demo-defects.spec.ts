/**
 * The demo as a new user meets it (issue #19, defects 1–9), on the built dist/demo in real Chromium with the WASM
 * backend: failed loads never poison startup or the working model, files that are not usable GGUFs are never kept,
 * the download panel never shows stale state, errors speak plainly (details behind "Details", dismissible), the
 * speed after Stop is real, finish notes persist, the loaded model is visible everywhere, phones get a visible load
 * path and an accessible page, and a model without a chat template offers completion mode. Each test has its own
 * browser context (fresh IndexedDB); service workers are blocked (the PWA specs cover them).
 * WEBGGUF_DEMO_DIR=<folder> runs the same tests against another build (e.g. the previous demo, to see them fail).
 */

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, type Page, expect, test } from '@playwright/test';
import { parseGguf, writeGguf } from '../../src/gguf/index.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { SHARED_DIR, sharedPath } from '../helpers/shared-path.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const DEMO_DIR = process.env.WEBGGUF_DEMO_DIR ?? resolve(REPO_ROOT, 'dist/demo');
const MODEL_PATH = '/shared/models/stories260K.gguf';
const PROMPT = 'Once upon a time';
const LOAD_TIMEOUT = Number(process.env.WEBGGUF_DEMO_LOAD_TIMEOUT ?? 120_000);

let server: StaticServer;
let badDir: string;

test.beforeAll(async () => {
  // Bad "models", made now from the committed fixture: text renamed .gguf, a web page, a truncated GGUF, a GGUF with
  // the metadata and vocabulary but no tensors (like llama.cpp's vocab-only files).
  badDir = mkdtempSync(join(tmpdir(), 'webgguf-demo-bad-'));
  const model = readFileSync(sharedPath('models', 'stories260K.gguf'));
  writeFileSync(join(badDir, 'notes.gguf'), 'These are my notes, not a model.\n'.repeat(200));
  writeFileSync(
    join(badDir, 'page.gguf'),
    `<!DOCTYPE html><html><head><title>model.gguf · Hugging Face</title></head><body>${'<p>x</p>'.repeat(500)}</body></html>`,
  );
  writeFileSync(join(badDir, 'truncated.gguf'), model.subarray(0, Math.floor(model.length * 0.6)));
  const parsed = await parseGguf(new MemoryByteSource(new Uint8Array(model)));
  writeFileSync(
    join(badDir, 'vocab-only.gguf'),
    writeGguf({ version: parsed.version, metadata: parsed.metadata, metadataTypes: parsed.metadataTypes, tensors: [] }),
  );
  writeFileSync(join(badDir, 'hf-page.html'), '<!DOCTYPE html><html><body>a Hugging Face file page</body></html>');
  server = await startStaticServer({ '/': DEMO_DIR, '/shared/': SHARED_DIR, '/bad/': badDir });
});

test.afterAll(async () => {
  await server?.close();
});

async function open(
  browser: Browser,
  viewport = { width: 1280, height: 800 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, serviceWorkers: 'block' });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  // The demo logs every error it shows (on purpose here); print them only when asked.
  if (process.env.WEBGGUF_DEMO_DEBUG) page.on('console', (m) => console.log(`[page ${m.type()}] ${m.text()}`));
  return { context, page };
}

const url = (q: Record<string, string>): string => server.url(`/?${new URLSearchParams({ backend: 'wasm', ...q })}`);

async function ready(p: Page): Promise<void> {
  await expect(p.locator('body')).toHaveAttribute('data-engine', 'ready', { timeout: LOAD_TIMEOUT });
}

async function loadByUrl(p: Page, u: string): Promise<void> {
  await p.locator('#custom-url').fill(u);
  await p.locator('#load-model').click();
}

const errorBox = (p: Page) => p.locator('#error');

async function ask(p: Page, text: string): Promise<void> {
  await p.locator('#prompt').fill(text);
  await p.locator('#prompt').press('Enter');
  await expect(p.locator('li.message.assistant').last()).toHaveAttribute('data-done', 'true', {
    timeout: LOAD_TIMEOUT,
  });
}

test('defect 1: a failed load is never retried at startup; the last model that worked loads from the cache', async ({
  browser,
}) => {
  const { context, page } = await open(browser);
  try {
    await page.goto(url({ model: MODEL_PATH, raw: '1' }));
    await ready(page);
    await loadByUrl(page, '/shared/models/missing-model.gguf');
    await expect(errorBox(page)).toBeVisible();
    server.log.length = 0;
    await page.goto(url({ raw: '1' }));
    await ready(page);
    await expect(page.locator('#model-name')).toContainText('stories260K');
    expect(server.requestsFor('/shared/models/missing-model.gguf')).toHaveLength(0);
    expect(server.requestsFor(MODEL_PATH)).toHaveLength(0);
    await expect(errorBox(page)).toBeHidden();
    // A broken ?model= link at startup: its error stays on screen, and the model that worked loads anyway.
    await page.goto(url({ raw: '1', model: '/shared/models/missing-model.gguf' }));
    await ready(page);
    await expect(page.locator('#model-name')).toContainText('stories260K');
    await expect(page.locator('#error .error-summary')).toHaveText('The model file was not found at that address.');
  } finally {
    await context.close();
  }
});

test('defect 2: a failed switch keeps the working model loaded and usable', async ({ browser }) => {
  const { context, page } = await open(browser);
  try {
    await page.goto(url({ model: MODEL_PATH, raw: '1', temperature: '0', max_tokens: '8' }));
    await ready(page);
    await context.setOffline(true);
    await page.locator('#catalogue').selectOption({ index: 2 });
    await page.locator('#load-model').click();
    await expect(errorBox(page)).toBeVisible();
    await expect(errorBox(page)).toContainText('offline');
    await expect(page.locator('body')).toHaveAttribute('data-engine', 'ready');
    await expect(page.locator('#model-name')).toContainText('stories260K');
    await ask(page, PROMPT);
    // biome-ignore lint/performance/useDomNodeTextContent: innerText() is the rendered text the user reads, which is what this checks
    expect((await page.locator('li.message.assistant .content').last().innerText()).trim().length).toBeGreaterThan(0);
  } finally {
    await context.setOffline(false);
    await context.close();
  }
});

test('defect 3: text, HTML, truncated and weightless files are never listed as cached models', async ({ browser }) => {
  const { context, page } = await open(browser);
  try {
    await page.goto(url({}));
    for (const name of ['notes.gguf', 'page.gguf', 'truncated.gguf', 'vocab-only.gguf']) {
      await loadByUrl(page, `/bad/${name}`);
      await expect(errorBox(page)).toBeVisible({ timeout: LOAD_TIMEOUT });
      await expect(page.locator('#load-model')).toBeEnabled();
      await expect(page.locator('body')).not.toHaveAttribute('data-loading', 'true', { timeout: LOAD_TIMEOUT });
      console.log(`${name}: ${(await page.locator('#error .error-summary').textContent()) ?? ''}`);
      await expect(page.locator('#cached-models')).not.toContainText(name);
      await page.locator('#error .dismiss').click();
    }
    await page.reload();
    await expect(page.locator('#cached-models')).toContainText('None yet');
  } finally {
    await context.close();
  }
});

test('defect 4: the download panel shows no stale state after a failure or a local file', async ({ browser }) => {
  const { context, page } = await open(browser);
  try {
    await page.goto(url({ raw: '1' }));
    await loadByUrl(page, '/shared/models/missing-model.gguf');
    await expect(errorBox(page)).toBeVisible();
    await expect(page.locator('#download')).toBeHidden();
    await page.locator('#local-file').setInputFiles(sharedPath('models', 'stories260K.gguf'));
    await ready(page);
    await expect(page.locator('#download')).toBeHidden();
    await expect(page.locator('#download-text')).not.toContainText('Connecting');
  } finally {
    await context.close();
  }
});

test('defect 5: errors lead with one plain sentence per cause, details behind "Details", and can be dismissed', async ({
  browser,
}) => {
  const { context, page } = await open(browser);
  try {
    await page.goto(url({ raw: '1' }));
    const summary = page.locator('#error .error-summary');
    // Not found: no advice to press a Load button that does not exist or to resume.
    await loadByUrl(page, '/shared/models/missing-model.gguf');
    await expect(summary).toHaveText('The model file was not found at that address.');
    await expect(errorBox(page)).not.toContainText('press Load again');
    await expect(page.locator('#error details pre')).toBeHidden();
    await page.locator('#error summary').click();
    await expect(page.locator('#error details pre')).toContainText('404');
    await page.getByRole('button', { name: 'Dismiss this message' }).click();
    await expect(errorBox(page)).toBeHidden();
    // Text that is not an address is refused before any request.
    server.log.length = 0;
    await loadByUrl(page, 'hello world');
    await expect(summary).toContainText('is not a web address');
    expect(server.log.filter((r) => /hello/.test(r.path))).toEqual([]);
    // A web page instead of a model, a file without weights.
    await loadByUrl(page, '/bad/page.gguf');
    await expect(summary).toHaveText('This address is a web page, not a model file.');
    await loadByUrl(page, '/bad/vocab-only.gguf');
    await expect(summary).toContainText('holds no model weights', { timeout: LOAD_TIMEOUT });
    // Offline is said as offline (not CORS).
    await context.setOffline(true);
    await loadByUrl(page, 'https://example.com/model.gguf');
    await expect(summary).toHaveText('You are offline.');
    await context.setOffline(false);
    // A Hugging Face page link (/blob/) is rewritten to its download link (/resolve/) and loads.
    await context.route('https://huggingface.co/**', async (route) => {
      const path = new URL(route.request().url()).pathname;
      if (path.includes('/blob/'))
        return route.fulfill({ status: 200, contentType: 'text/html', path: join(badDir, 'hf-page.html') });
      const response = await route.fetch({ url: server.url(MODEL_PATH) });
      return route.fulfill({ response });
    });
    await loadByUrl(page, 'https://huggingface.co/someone/stories/blob/main/stories260K.gguf');
    await ready(page);
    await expect(page.locator('#custom-url')).toHaveValue(
      'https://huggingface.co/someone/stories/resolve/main/stories260K.gguf',
    );
  } finally {
    await context.setOffline(false);
    await context.close();
  }
});

test("defect 6: after Stop the speed is this answer's real speed; nothing before the first token; notes persist", async ({
  browser,
}) => {
  const { context, page } = await open(browser);
  try {
    await page.goto(url({ model: MODEL_PATH, raw: '1', max_tokens: '2000' }));
    await ready(page);
    const sentAt = Date.now();
    await page.locator('#prompt').fill(PROMPT);
    await page.locator('#send').click();
    const first = page.locator('li.message.assistant').last();
    await expect
      // biome-ignore lint/performance/useDomNodeTextContent: innerText() is the rendered text the user reads, which is what this checks
      .poll(async () => (await first.locator('.content').innerText()).length, { timeout: LOAD_TIMEOUT })
      .toBeGreaterThan(40);
    await page.locator('#stop').click();
    await expect(first).toHaveAttribute('data-done', 'true');
    const wallSeconds = (Date.now() - sentAt) / 1000;
    await expect(page.locator('#stats')).toContainText('first token');
    const stats = (await page.locator('#stats').textContent()) ?? '';
    console.log(`after Stop: ${stats}`);
    expect(stats).not.toContain('overall');
    const m = /(\d+) tokens in ([\d.]+) s · ([\d.]+) tok\/s/.exec(stats);
    expect(m, stats).not.toBeNull();
    const [tokens, seconds, rate] = [Number(m![1]), Number(m![2]), Number(m![3])];
    expect(tokens).toBeGreaterThan(1);
    expect(seconds).toBeLessThanOrEqual(wallSeconds);
    expect(Math.abs(rate - (tokens - 1) / seconds)).toBeLessThanOrEqual(0.06 * rate + 0.1);
    await expect(first.locator('.note')).toHaveText('— stopped');
    // Stopped before the first token: no speed at all.
    await page.evaluate(() => {
      (document.getElementById('prompt') as HTMLTextAreaElement).value = 'The end';
      document.getElementById('send')!.click();
      document.getElementById('stop')!.click();
    });
    await expect(page.locator('li.message.assistant').last()).toHaveAttribute('data-done', 'true');
    await expect(page.locator('#stats')).toHaveText('stopped before the first token');
    // Notes survive a reload and a Regenerate of a later answer.
    await page.reload();
    await ready(page);
    await expect(page.locator('li.message.assistant').first().locator('.note')).toHaveText('— stopped');
    await page.locator('#max-tokens').fill('8');
    await page.locator('#max-tokens').dispatchEvent('change');
    await page.locator('#regenerate').click();
    await expect(page.locator('li.message.assistant').last()).toHaveAttribute('data-done', 'true', {
      timeout: LOAD_TIMEOUT,
    });
    await expect(page.locator('li.message.assistant').first().locator('.note')).toHaveText('— stopped');
    await expect(page.locator('li.message.assistant').last().locator('.note')).toHaveText('— reached the token limit');
  } finally {
    await context.close();
  }
});

test('defect 7: the loaded model is named everywhere; Delete asks first and unloads the loaded model', async ({
  browser,
}) => {
  const { context, page } = await open(browser);
  try {
    await page.goto(url({ model: MODEL_PATH, raw: '1' }));
    await ready(page);
    await expect(page.locator('#model-name')).toContainText('stories260K');
    expect(await page.locator('#catalogue').inputValue()).toBe(''); // not some other catalogue model
    const active = page.locator('#cached-models li[aria-current="true"]');
    await expect(active).toContainText('stories260K.gguf');
    await expect(active).toContainText('loaded');
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(page.locator('#model-name')).toBeVisible();
    await page.setViewportSize({ width: 1280, height: 800 });
    await active.getByRole('button', { name: /^Delete/ }).click();
    await expect(page.locator('body')).toHaveAttribute('data-engine', 'ready'); // nothing deleted yet
    await expect(page.locator('#cached-models')).toContainText('stories260K.gguf');
    await page.getByRole('button', { name: 'Unload and delete' }).click();
    await expect(page.locator('#cached-models')).not.toContainText('stories260K.gguf');
    await expect(page.locator('#model-name')).toHaveText('no model loaded');
    await expect(page.locator('#send')).toBeDisabled();
  } finally {
    await context.close();
  }
});

test("defect 8: a phone's first visit shows how to load a model; ☰ has a name; only finished answers are announced", async ({
  browser,
}) => {
  const { context, page } = await open(browser, { width: 390, height: 844 });
  try {
    await page.goto(url({ raw: '1', temperature: '0', max_tokens: '8' }));
    const card = page.locator('#first-run');
    await expect(card).toBeVisible();
    await expect(card).toContainText('runs on your device');
    await expect(card.getByRole('button', { name: /^Download .*MB\)$/ })).toBeVisible();
    await expect(card).toContainText(/This browser will use (WebGPU f16|WebGPU f32|WASM)/);
    await expect(page.getByRole('button', { name: 'Models and settings' })).toBeVisible();
    await expect(page.locator('#sidebar')).toBeHidden();
    expect(await page.locator('#messages').getAttribute('aria-live')).toBeNull();
    const chooser = page.waitForEvent('filechooser');
    await card.getByRole('button', { name: 'Open a local .gguf' }).click();
    await (await chooser).setFiles(sharedPath('models', 'stories260K.gguf'));
    await ready(page);
    await expect(card).toBeHidden();
    await ask(page, PROMPT);
    // biome-ignore lint/performance/useDomNodeTextContent: innerText() is the rendered text the user reads, which is what this checks
    const answer = (await page.locator('li.message.assistant .content').last().innerText()).trim();
    await expect(page.locator('#announcer')).toContainText(answer.slice(0, 20));
    expect(await page.locator('#announcer').getAttribute('aria-live')).toBe('polite');
  } finally {
    await context.close();
  }
});

test('defect 9: a model without a chat template says so and offers completion mode', async ({ browser }) => {
  const { context, page } = await open(browser);
  try {
    await page.goto(url({ model: MODEL_PATH }));
    await ready(page);
    const note = page.locator('#template-note');
    await expect(note).toBeVisible();
    await expect(note).toContainText('no chat template');
    await expect(page.locator('#model-info')).toContainText('none in the file');
    await note.getByRole('button', { name: 'Switch to completion mode' }).click();
    await expect(page.getByRole('radio', { name: 'Completion' })).toBeChecked();
    await expect(note).toBeHidden();
    await page.reload();
    await ready(page);
    await expect(page.getByRole('radio', { name: 'Completion' })).toBeChecked();
    await expect(note).toBeHidden();
  } finally {
    await context.close();
  }
});
