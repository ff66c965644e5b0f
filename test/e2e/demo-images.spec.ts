/**
 * Images in the demo chat (issue #17) on the built dist/demo in real Chromium, WASM backend: `?model=&mmproj=` loads
 * the random-weight gemma3 fixture with a synthetic gemma3 projector (written at test time, served from 127.0.0.1)
 * through the model store; an image attached with the button (a PNG made here) or pasted shows in the composer, is
 * sent as an `image_url` part, shows as a thumbnail in the user's message, is answered, survives a reload and is in the
 * Markdown export; a file that is not an image and an image sent to a text-only model are explained inline under the
 * composer; a projector's download pauses and resumes (after a reload) through its model, never resumed on its own.
 */

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, type Page, expect, test } from '@playwright/test';
import { PNG } from 'pngjs';
import { DEFAULT_GEMMA3_MMPROJ, gemma3Mmproj } from '../../scripts/synthetic/mmproj-gemma3.js';
import { SHARED_DIR } from '../helpers/shared-path.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const DEMO_DIR = resolve(REPO_ROOT, 'dist/demo');
const MODEL_PATH = '/shared/models/arch/gemma3-f16.gguf'; // n_embd 256
const MMPROJ_PATH = '/gen/gemma3-synthetic.mmproj.gguf';
/** A larger projector (2.2 MB: a wide MLP), slow enough through `?throttle` to pause mid-download. */
const BIG_MMPROJ_PATH = '/gen/gemma3-wide.mmproj.gguf';
const TEXT_ONLY_PATH = '/shared/models/stories260K.gguf';
const LOAD_TIMEOUT = 60_000;

let server: StaticServer;
let context: BrowserContext;
let page: Page;
let genDir: string;

/** A 40 × 24 PNG with a colour gradient. */
function png(): Buffer {
  const img = new PNG({ width: 40, height: 24 });
  for (let i = 0; i < 40 * 24; i++) img.data.set([(i * 7) % 256, (i * 3) % 256, 128, 255], i * 4);
  return PNG.sync.write(img);
}

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ browser }) => {
  if (!existsSync(resolve(DEMO_DIR, 'index.html')))
    throw new Error(`${DEMO_DIR} is missing: run \`npm run build\` first`);
  genDir = mkdtempSync(join(tmpdir(), 'webgguf-demo-images-'));
  writeFileSync(
    join(genDir, 'gemma3-synthetic.mmproj.gguf'),
    gemma3Mmproj(5, { ...DEFAULT_GEMMA3_MMPROJ, nEmbdText: 256 }),
  );
  writeFileSync(
    join(genDir, 'gemma3-wide.mmproj.gguf'),
    gemma3Mmproj(6, { ...DEFAULT_GEMMA3_MMPROJ, nEmbdText: 256, nFf: 4096 }),
  );
  server = await startStaticServer({ '/': DEMO_DIR, '/shared/': SHARED_DIR, '/gen/': genDir });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
  page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
});

test.afterAll(async () => {
  await context?.close();
  await server?.close();
  if (genDir) rmSync(genDir, { recursive: true, force: true });
});

function demoUrl(params: Record<string, string>): string {
  return server.url(`/?${new URLSearchParams({ backend: 'wasm', temperature: '0', max_tokens: '4', ...params })}`);
}

async function waitForEngine(p: Page): Promise<void> {
  await expect(p.locator('body')).toHaveAttribute('data-engine', 'ready', { timeout: LOAD_TIMEOUT });
}

/** The prompt size of the last answer, from the stats line ("prompt N tokens"). */
async function promptTokens(p: Page): Promise<number> {
  await expect(p.locator('#stats')).toContainText('prompt');
  return Number(/prompt (\d+) tokens/.exec((await p.locator('#stats').textContent()) ?? '')?.[1]);
}

async function attachPng(p: Page): Promise<void> {
  await p.locator('#attach-file').setInputFiles({ name: 'gradient.png', mimeType: 'image/png', buffer: png() });
  await expect(p.locator('#attachment')).toBeVisible();
  expect(await p.locator('#attachment-thumb').getAttribute('src')).toMatch(/^data:image\/jpeg;base64,/);
}

test('an image sent to a text-only model is explained inline with the library message', async () => {
  await page.goto(demoUrl({ model: TEXT_ONLY_PATH }));
  await waitForEngine(page);
  await page.locator('#clear').click();
  await attachPng(page);
  await page.locator('#prompt').fill('Describe this');
  await page.locator('#send').click();
  await expect(page.locator('#attach-note')).toContainText('takes text only');
  await expect(page.locator('#attach-note')).toContainText('mmproj');
  // The question is back in the composer with its image; nothing was added to the conversation, nothing crashed.
  await expect(page.locator('#prompt')).toHaveValue('Describe this');
  await expect(page.locator('#attachment')).toBeVisible();
  await expect(page.locator('li.message')).toHaveCount(0);
  await expect(page.locator('#error')).toBeHidden();
  // The note was about that model: unloading it clears the note.
  await page.locator('#unload').click();
  await expect(page.locator('#attach-note')).toBeHidden();
});

test('a model with its mmproj answers an attached image; the thumbnail stays after a reload', async () => {
  await page.goto(demoUrl({ model: MODEL_PATH, mmproj: MMPROJ_PATH }));
  await waitForEngine(page);
  // The projector went through the model store, listed as such (never offered as a chat model).
  await expect(page.locator('#cached-models li', { hasText: 'gemma3-synthetic.mmproj.gguf' })).toContainText(
    'vision projector',
  );
  expect(server.requestsFor(MMPROJ_PATH).length).toBeGreaterThan(0);

  await attachPng(page);
  await page.locator('#prompt').fill('What is in the picture?');
  await page.locator('#prompt').press('Enter');
  await expect(page.locator('#attachment')).toBeHidden();
  const thumb = page.locator('li.message.user img.thumb');
  await expect(thumb).toBeVisible();
  expect(await thumb.getAttribute('src')).toMatch(/^data:image\/jpeg;base64,/);
  const answer = page.locator('li.message.assistant').last();
  await expect(answer).toHaveAttribute('data-done', 'true', { timeout: LOAD_TIMEOUT });
  expect(await answer.getAttribute('data-finish')).not.toBe('error');
  await expect(page.locator('#error')).toBeHidden();
  const withImage = await promptTokens(page);

  // Pasting a picture into the message box attaches it too.
  await page.locator('#prompt').evaluate((el, bytes) => {
    const data = new DataTransfer();
    data.items.add(new File([new Uint8Array(bytes)], 'pasted.png', { type: 'image/png' }));
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, Array.from(png()));
  await expect(page.locator('#attachment')).toBeVisible();
  await page.locator('#attachment-remove').click();
  await expect(page.locator('#attachment')).toBeHidden();

  // A reload reopens the model with its remembered projector and shows the stored thumbnail.
  await page.goto(demoUrl({}));
  await waitForEngine(page);
  await expect(page.locator('li.message.user img.thumb')).toBeVisible();
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export Markdown' }).click();
  expect(readFileSync(await (await download).path(), 'utf8')).toMatch(
    /## You\n\n!\[Attached image\]\(data:image\/jpeg;base64,[A-Za-z0-9+/=]+\)\n\nWhat is in the picture\?/,
  );

  // The image really went into the prompt: the same question without it is 4 image tokens (+ markers) shorter.
  await page.locator('#clear').click();
  await page.locator('#prompt').fill('What is in the picture?');
  await page.locator('#prompt').press('Enter');
  await expect(page.locator('li.message.assistant').last()).toHaveAttribute('data-done', 'true', {
    timeout: LOAD_TIMEOUT,
  });
  expect(withImage - (await promptTokens(page))).toBeGreaterThanOrEqual(4);
});

test('a file that is not an image is refused inline', async () => {
  await page.locator('#attach-file').setInputFiles({
    name: 'notes.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('not a picture'),
  });
  await expect(page.locator('#attach-note')).toContainText('notes.txt is not an image');
  await expect(page.locator('#attachment')).toBeHidden();
});

test("the projector's download shows progress, pauses, and resumes through its model after a reload", async () => {
  const slow = `${BIG_MMPROJ_PATH}?throttle=1`;
  await page.goto(demoUrl({ model: MODEL_PATH, mmproj: slow })); // the model is stored already: only the projector
  const text = page.locator('#download-text');
  await expect(text).toContainText('Vision projector:', { timeout: 30_000 });
  await page.locator('#pause-download').click();
  await expect(page.locator('#download')).toHaveAttribute('data-state', 'paused');
  await expect(text).toContainText('Vision projector:');
  // After a reload, the paused projector is offered for resumption under its model's URL, and resuming loads both.
  await page.goto(demoUrl({}));
  await expect(page.locator('#download')).toHaveAttribute('data-state', 'paused', { timeout: 30_000 });
  await expect(text).toContainText('Vision projector:');
  expect(await page.locator('#custom-url').inputValue()).toBe(server.url(MODEL_PATH));
  // Startup does not resume it (nor load the model without it): the download stays paused until Resume.
  const requests = server.requestsFor(BIG_MMPROJ_PATH).length;
  await page.waitForTimeout(1500);
  await expect(page.locator('#download')).toHaveAttribute('data-state', 'paused');
  expect(server.requestsFor(BIG_MMPROJ_PATH)).toHaveLength(requests);
  await page.locator('#pause-download').click();
  await waitForEngine(page);
  await expect(page.locator('#cached-models li', { hasText: 'gemma3-wide.mmproj.gguf' })).toContainText(
    'vision projector',
  );
  await expect(page.locator('#cached-models li', { hasText: 'gemma3-wide.mmproj.gguf' })).not.toContainText('partial');
});
