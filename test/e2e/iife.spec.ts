/**
 * The script-tag bundle (dist/iife/webgguf.js) in real Chromium: a plain HTML page in another folder loads it with
 * `<script src>` and generates text through the worker engine (Comlink), its worker and WASM files resolving next to
 * the script. Also the worker boundary: an aborted request rejects with `LlmError` code 'aborted' (streamed and
 * not), an error raised in the worker arrives as an `LlmError` with its code, and the engine keeps working after.
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Page, expect, test } from '@playwright/test';
import { SHARED_DIR } from '../helpers/shared-path.js';
import { REPO_ROOT, readStories260kReference, requireIifeDir } from './support/page-setup.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const IIFE_DIR = resolve(REPO_ROOT, 'dist/iife');
const MODEL_PATH = '/shared/models/stories260K.gguf';
const REFERENCE = readStories260kReference();

let server: StaticServer;

test.beforeAll(async () => {
  server = await startStaticServer({
    '/cdn/webgguf/': requireIifeDir(),
    '/pages/': resolve(REPO_ROOT, 'test/e2e/support'),
    '/shared/': SHARED_DIR,
  });
});

test.afterAll(async () => {
  await server?.close();
});

/** Outcome of a call made in the page: resolved value, or the rejection's class, code and message. */
type Outcome = { ok: true; value: string } | { ok: false; isLlmError: boolean; code: string | null; message: string };

async function openPage(page: Page, backend: string, engine: 'worker' | 'in-thread' = 'worker'): Promise<void> {
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  const q = new URLSearchParams({
    model: MODEL_PATH,
    backend,
    engine,
    prompt: REFERENCE.prompt,
    max_tokens: String(REFERENCE.greedy_kv_f32.n),
  });
  await page.goto(server.url(`/pages/iife.html?${q}`));
  await expect(page.locator('#status')).toHaveText('done', { timeout: 180_000 });
}

test('a plain page with only the script-tag bundle generates the reference text in a worker', async ({ page }) => {
  await openPage(page, 'wasm');
  expect((await page.locator('#output').textContent())?.trim()).toBe(REFERENCE.greedy_kv_f32.text.trim());
  const info = await page.evaluate(() => {
    const w = window as unknown as {
      engine: { info: { backend: { name: string; description: string } } };
      WebGGUF: Record<string, unknown>;
    };
    return { backend: w.engine.info.backend, exports: Object.keys(w.WebGGUF).sort() };
  });
  console.log(`script-tag engine backend: ${info.backend.description}`);
  expect(info.backend.name).toBe('wasm');
  expect(info.exports).toEqual(
    expect.arrayContaining(['createEngine', 'createWorkerEngine', 'LlmError', 'downloadModel', 'listModels']),
  );
  // Only the script's own folder served the code: the worker and WASM resolved relative to webgguf.js.
  const code = server.log.filter((r) => /\.(js|wasm)$/.test(r.path)).map((r) => r.path);
  expect(code.length).toBeGreaterThan(1);
  expect(code.every((p) => p.startsWith('/cdn/webgguf/'))).toBe(true);
  expect(server.log.filter((r) => r.status === 404)).toEqual([]);
  // The worker page never downloads the in-thread engine module (webgguf.js holds no copy of the engine either).
  expect(code.some((p) => /\/in-thread-entry-[^/]+\.js$/.test(p))).toBe(false);
});

test('createEngine from the script tag runs the engine in the page, its module fetched on first use', async ({
  page,
}) => {
  server.log.length = 0;
  await openPage(page, 'wasm', 'in-thread');
  expect((await page.locator('#output').textContent())?.trim()).toBe(REFERENCE.greedy_kv_f32.text.trim());
  const code = server.log.filter((r) => /\.(js|wasm)$/.test(r.path)).map((r) => r.path);
  expect(code.some((p) => /\/in-thread-entry-[^/]+\.js$/.test(p))).toBe(true);
  expect(code.some((p) => /\/worker-[^/]+\.js$/.test(p))).toBe(false);
  expect(code.every((p) => p.startsWith('/cdn/webgguf/'))).toBe(true);
  expect(server.log.filter((r) => r.status === 404)).toEqual([]);
});

test('worker boundary: aborts reject with code aborted, LlmError codes survive, the engine keeps working', async ({
  page,
}) => {
  await openPage(page, 'wasm');
  const results = await page.evaluate(async (prompt): Promise<Record<string, Outcome>> => {
    type Err = { code?: string; message?: string };
    const w = window as unknown as {
      WebGGUF: { LlmError: new (...a: never[]) => Error; createWorkerEngine(o: object): Promise<unknown> };
      engine: { completions: { create(r: object): Promise<unknown> } };
    };
    const { LlmError } = w.WebGGUF;
    const settle = async (f: () => Promise<string>): Promise<Outcome> => {
      try {
        return { ok: true, value: await f() };
      } catch (e) {
        const err = e as Err;
        return {
          ok: false,
          isLlmError: e instanceof LlmError,
          code: err.code ?? null,
          message: String(err.message ?? e),
        };
      }
    };
    const create = (r: object) => w.engine.completions.create({ prompt, temperature: 0, ...r });
    const out: Record<string, Outcome> = {};
    // A streamed request aborted after its first chunk.
    out.streamAbort = await settle(async () => {
      const c = new AbortController();
      const stream = (await create({ max_tokens: 1000, stream: true, signal: c.signal })) as AsyncIterable<{
        choices: { text: string }[];
      }>;
      let text = '';
      for await (const chunk of stream) {
        text += chunk.choices[0].text;
        c.abort();
      }
      return `ended without error after ${text.length} chars`;
    });
    // A whole (non-streamed) request aborted while it runs.
    out.wholeAbort = await settle(async () => {
      const c = new AbortController();
      setTimeout(() => c.abort(), 30);
      const r = (await create({ max_tokens: 1500, signal: c.signal })) as { choices: { text: string }[] };
      return `finished: ${r.choices[0].text.length} chars`;
    });
    // An already-aborted signal.
    out.preAborted = await settle(async () => {
      const c = new AbortController();
      c.abort();
      await create({ max_tokens: 5, signal: c.signal });
      return 'finished';
    });
    // A bad request, rejected inside the worker.
    out.badRequest = await settle(async () => {
      await create({ max_tokens: 5, temperature: -1 });
      return 'accepted';
    });
    // A model URL that does not exist: the worker's loader fails.
    out.badModel = await settle(async () => {
      await w.WebGGUF.createWorkerEngine({ model: '/shared/models/no-such-model.gguf', backend: 'wasm' });
      return 'loaded';
    });
    // The engine still answers.
    out.after = await settle(async () => {
      const r = (await create({ max_tokens: 30 })) as { choices: { text: string }[] };
      return r.choices[0].text;
    });
    return out;
  }, REFERENCE.prompt);
  console.log(JSON.stringify(results, null, 1));
  for (const k of ['streamAbort', 'wholeAbort', 'preAborted'] as const) {
    expect(results[k], k).toMatchObject({ ok: false, isLlmError: true, code: 'aborted' });
  }
  expect(results.badRequest).toMatchObject({ ok: false, isLlmError: true, code: 'invalid-request' });
  expect(results.badModel).toMatchObject({ ok: false, isLlmError: true, code: 'network' });
  expect(results.after).toEqual({ ok: true, value: REFERENCE.greedy_kv_f32.text });
});

test('the script-tag bundle also works from another origin (a CDN), its worker started through a blob module', async ({
  page,
}) => {
  const cdn = await startStaticServer({ '/cdn/webgguf/': IIFE_DIR });
  // The page comes from the main server (with COOP/COEP), the bundle from the CDN's origin (another port).
  const pageDir = resolve(REPO_ROOT, 'test-results/e2e-bundles/iife-cdn');
  mkdirSync(pageDir, { recursive: true });
  const html = readFileSync(resolve(REPO_ROOT, 'test/e2e/support/iife.html'), 'utf8');
  writeFileSync(
    resolve(pageDir, 'cdn.html'),
    html.replace('../cdn/webgguf/webgguf.js', cdn.url('/cdn/webgguf/webgguf.js')),
  );
  const pages = await startStaticServer({ '/pages/': pageDir, '/shared/': SHARED_DIR });
  try {
    page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
    const q = new URLSearchParams({
      model: MODEL_PATH,
      backend: 'wasm',
      prompt: REFERENCE.prompt,
      max_tokens: String(REFERENCE.greedy_kv_f32.n),
    });
    await page.goto(pages.url(`/pages/cdn.html?${q}`));
    await expect(page.locator('#status')).toHaveText(/^(done|error)/, { timeout: 180_000 });
    await expect(page.locator('#status')).toHaveText('done');
    expect((await page.locator('#output').textContent())?.trim()).toBe(REFERENCE.greedy_kv_f32.text.trim());
    expect(cdn.log.some((r) => /\/assets\/worker-[^/]+\.js$/.test(r.path))).toBe(true);
    expect(cdn.log.some((r) => r.path.endsWith('.wasm'))).toBe(true);
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  } finally {
    await cdn.close();
    await pages.close();
  }
});
