/**
 * `createSharedWorkerEngine` in real Chromium with several tabs (pages of one browser context) on
 * test/e2e/pages/shared-worker.html, which uses the script-tag bundle: a second tab attaches to the model the first
 * loaded (no second load: the same engine's stats count both tabs' requests), also while the first tab's load is
 * still downloading (it sees that load's progress); requests of the tabs take turns round-robin; closing the tab
 * that loaded the model mid-generation leaves the other tab's generation intact; an abort in one tab does not touch
 * the other; errors keep their code; without SharedWorker a dedicated worker is used. Also the unload deadline: a
 * worker that hangs on `unload()` (test/e2e/pages/hung-worker.js) is terminated and `unload()` returns.
 */

import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type BrowserContext, type Page, expect, test } from '@playwright/test';
import { SHARED_DIR, sharedPath } from '../helpers/shared-path.js';
import { REPO_ROOT, readStories260kReference, requireIifeDir } from './support/page-setup.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const MODEL_PATH = '/shared/models/stories260K.gguf';
const REFERENCE = readStories260kReference();
/** The reference request: greedy, its text known from llama.cpp. */
const REF_REQUEST = { prompt: REFERENCE.prompt, max_tokens: REFERENCE.greedy_kv_f32.n };
const LOAD = { model: MODEL_PATH, backend: 'wasm' };

let server: StaticServer;

test.beforeAll(async () => {
  server = await startStaticServer({
    '/cdn/webgguf/': requireIifeDir(),
    '/pages/': resolve(REPO_ROOT, 'test/e2e/pages'),
    '/shared/': SHARED_DIR,
  });
});

test.afterAll(async () => {
  await server?.close();
});

interface Outcome {
  ok: boolean;
  isLlmError?: boolean;
  code?: string | null;
  message?: string;
}
interface Loaded extends Outcome {
  sharing?: { mode: string; attached: boolean };
  identity?: string;
  backend?: string;
}
interface Run {
  start: number;
  end: number;
  chunks: number;
  text: string;
  result: Outcome;
}

type T = {
  load(o: object): Promise<Loaded>;
  start(name: string, request: object, abortAfter?: number): void;
  wait(name: string): Promise<Run>;
  chunks(name: string): number;
  stats(): Promise<{ requests: number; loadMs: number; decodeTokens: number }>;
  progress: { phase: string; loadedBytes: number }[];
};

async function openTab(context: BrowserContext, query = ''): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  await page.goto(server.url(`/pages/shared-worker.html${query}`));
  await page.waitForFunction(() => 't' in window && 'WebGGUF' in window);
  return page;
}

const load = (page: Page, options: object = LOAD) =>
  page.evaluate((o) => (window as unknown as { t: T }).t.load(o), options);
const start = (page: Page, name: string, request: object, abortAfter?: number) =>
  page.evaluate(([n, r, a]) => (window as unknown as { t: T }).t.start(n, r, a), [name, request, abortAfter] as const);
const wait = (page: Page, name: string) => page.evaluate((n) => (window as unknown as { t: T }).t.wait(n), name);
const stats = (page: Page) => page.evaluate(() => (window as unknown as { t: T }).t.stats());

test('a second tab attaches to the loaded model, and the tabs take turns round-robin', async ({ context }) => {
  const tab1 = await openTab(context);
  const first = await load(tab1);
  expect(first).toMatchObject({ ok: true, sharing: { mode: 'shared', attached: false } });
  console.log(
    `shared-worker engine backend: ${first.backend}; page cross-origin isolated: ${await tab1.evaluate(() => crossOriginIsolated)}`,
  );
  const tab2 = await openTab(context);
  const second = await load(tab2);
  expect(second).toMatchObject({ ok: true, sharing: { mode: 'shared', attached: true }, identity: first.identity });
  expect(await tab2.evaluate(() => (window as unknown as { t: T }).t.progress.map((p) => p.phase))).toEqual(['ready']);

  // Both tabs generate the reference text; one engine: its stats count both tabs' requests, its load time is one.
  start(tab1, 'r1', REF_REQUEST);
  await start(tab2, 'r2', REF_REQUEST);
  expect((await wait(tab1, 'r1')).text).toBe(REFERENCE.greedy_kv_f32.text);
  expect((await wait(tab2, 'r2')).text).toBe(REFERENCE.greedy_kv_f32.text);
  const [s1, s2] = [await stats(tab1), await stats(tab2)];
  expect(s1.requests).toBe(2);
  expect(s2).toEqual(s1);

  // Tab 1 queues twelve requests, then tab 2 one: round-robin runs tab 2's right after the one running then, so it
  // finishes before all of tab 1's still unfinished when it was sent but one or two (the one running, and one that
  // may have started while tab 2's request was on its way); a FIFO would run it after all of them.
  const long = { prompt: REFERENCE.prompt, max_tokens: 300, temperature: 0.8, seed: 7 };
  await tab1.evaluate((r) => {
    for (let i = 0; i < 12; i++) (window as unknown as { t: T }).t.start(`a${i}`, r);
  }, long);
  await start(tab2, 'b', long);
  const a = await Promise.all([...Array(12).keys()].map((i) => wait(tab1, `a${i}`)));
  const b = await wait(tab2, 'b');
  for (const r of [...a, b]) expect(r.result).toEqual({ ok: true });
  const unfinished = a.filter((r) => r.end > b.start).length;
  const after = a.filter((r) => r.end > b.end).length;
  console.log(`tab 1 had ${unfinished} of 12 requests unfinished when tab 2 sent its own; ${after} finished after it`);
  expect(unfinished).toBeGreaterThanOrEqual(4);
  expect(after).toBeGreaterThanOrEqual(unfinished - 2);

  // Other options load a separate engine beside it; nothing of tab 1's is touched.
  // The one worker script served both kinds of worker, next to the bundle.
  expect(server.log.filter((r) => r.status === 404)).toEqual([]);
  expect(server.log.some((r) => /^\/cdn\/webgguf\/assets\/worker-[^/]+\.js$/.test(r.path))).toBe(true);
  const tab3 = await openTab(context);
  expect(await load(tab3, { ...LOAD, contextLength: 64 })).toMatchObject({
    ok: true,
    sharing: { mode: 'shared', attached: false },
  });
  start(tab1, 'r3', REF_REQUEST);
  expect((await wait(tab1, 'r3')).text).toBe(REFERENCE.greedy_kv_f32.text);
});

test('a tab attaching while the first tab still downloads waits for that load and sees its progress', async ({
  context,
}) => {
  const url = `${MODEL_PATH}?throttle`;
  const logStart = server.log.length;
  const tab1 = await openTab(context);
  const loading1 = load(tab1, { ...LOAD, model: url });
  await tab1.waitForFunction(
    () => (window as unknown as { t: T }).t.progress.some((p) => p.phase === 'download' && p.loadedBytes > 0),
    undefined,
    { timeout: 60_000 },
  );
  const tab2 = await openTab(context);
  const second = await load(tab2, { ...LOAD, model: url });
  const first = await loading1;
  expect(first).toMatchObject({ ok: true, sharing: { attached: false } });
  expect(second).toMatchObject({ ok: true, sharing: { attached: true } });
  const phases = await tab2.evaluate(() => (window as unknown as { t: T }).t.progress.map((p) => p.phase));
  expect(phases[0]).toBe('download');
  expect(phases.at(-1)).toBe('ready');
  // One download: the bytes fetched add up to one load's reads (a second load would fetch the whole file again).
  const ranges = server.log
    .slice(logStart)
    .filter((r) => r.path === MODEL_PATH && r.method === 'GET')
    .map((r) => r.range ?? 'all');
  console.log(`model requests while two tabs loaded it: ${ranges.join(' ')}`);
  const size = statSync(sharedPath('models', 'stories260K.gguf')).size;
  const fetched = ranges.reduce((n, r) => {
    const m = /^bytes=(\d+)-(\d+)$/.exec(r);
    return n + (m ? Number(m[2]) - Number(m[1]) + 1 : size);
  }, 0);
  expect(fetched).toBeGreaterThanOrEqual(size);
  expect(fetched).toBeLessThan(1.5 * size);
  start(tab2, 'r', REF_REQUEST);
  expect((await wait(tab2, 'r')).text).toBe(REFERENCE.greedy_kv_f32.text);
});

test('closing the tab that loaded the model mid-generation ends only its requests; the other tab carries on', async ({
  context,
}) => {
  // Tab 1 hides pagehide from webgguf: only its Web Lock, released when the tab dies, tells the worker.
  const tab1 = await openTab(context, '?nobye=1');
  expect(await load(tab1)).toMatchObject({ ok: true, sharing: { attached: false } });
  const tab2 = await openTab(context);
  expect(await load(tab2)).toMatchObject({ ok: true, sharing: { attached: true } });
  const before = (await stats(tab2)).requests;
  // Tab 1: one streaming generation running and 39 more queued (many seconds of work in all).
  const long = { prompt: REFERENCE.prompt, max_tokens: 400, temperature: 0.8, seed: 1 };
  await tab1.evaluate((r) => {
    const t = (window as unknown as { t: T }).t;
    t.start('long', { ...r, stream: true });
    for (let i = 0; i < 39; i++) t.start(`q${i}`, r);
  }, long);
  await tab1.waitForFunction(() => (window as unknown as { t: T }).t.chunks('long') > 2);
  await start(tab2, 'r', REF_REQUEST);
  await tab1.close();
  const r = await wait(tab2, 'r');
  expect(r.result).toEqual({ ok: true });
  expect(r.text).toBe(REFERENCE.greedy_kv_f32.text);
  // The engine stays loaded for tab 2 alone, and tab 1's queued requests stop running once its death is seen: had the
  // worker not seen tab 1 die, all 40 of its generations would run (and count in stats). How many slip through
  // before the lock release reaches the worker depends on the machine's load (2–14 seen), so the bound is half.
  await new Promise((res) => setTimeout(res, 2000));
  await start(tab2, 'again', REF_REQUEST);
  expect((await wait(tab2, 'again')).text).toBe(REFERENCE.greedy_kv_f32.text);
  const ran = (await stats(tab2)).requests - before;
  console.log(`requests run after tab 1 queued 40 and closed: ${ran} (tab 2's two included)`);
  expect(ran).toBeLessThanOrEqual(21);
});

test('an abort in one tab does not touch the other; errors cross with their code', async ({ context }) => {
  const tab1 = await openTab(context);
  expect(await load(tab1)).toMatchObject({ ok: true });
  const tab2 = await openTab(context);
  expect(await load(tab2)).toMatchObject({ ok: true, sharing: { attached: true } });
  await start(
    tab1,
    'aborted',
    { prompt: REFERENCE.prompt, max_tokens: 400, temperature: 0.8, seed: 3, stream: true },
    3,
  );
  await start(tab2, 'r', { ...REF_REQUEST, stream: true });
  const aborted = await wait(tab1, 'aborted');
  expect(aborted.result).toMatchObject({ ok: false, isLlmError: true, code: 'aborted' });
  const r = await wait(tab2, 'r');
  expect(r.result).toEqual({ ok: true });
  expect(r.text).toBe(REFERENCE.greedy_kv_f32.text);
  await start(tab2, 'bad', { prompt: 'x', temperature: -1 });
  expect((await wait(tab2, 'bad')).result).toMatchObject({ ok: false, isLlmError: true, code: 'invalid-request' });
  const missing = await load(tab2, { ...LOAD, model: '/shared/models/no-such-model.gguf' });
  expect(missing).toMatchObject({ ok: false, isLlmError: true, code: 'network' });
  // Tab 1 carries on.
  await start(tab1, 'after', REF_REQUEST);
  expect((await wait(tab1, 'after')).text).toBe(REFERENCE.greedy_kv_f32.text);
});

test('without SharedWorker it falls back to a dedicated worker', async ({ context }) => {
  const tab = await openTab(context, '?noshared=1');
  expect(await tab.evaluate(() => typeof (window as unknown as { SharedWorker?: unknown }).SharedWorker)).toBe(
    'undefined',
  );
  expect(await load(tab)).toMatchObject({ ok: true, sharing: { mode: 'dedicated', attached: false } });
  await start(tab, 'r', REF_REQUEST);
  expect((await wait(tab, 'r')).text).toBe(REFERENCE.greedy_kv_f32.text);
});

test('unload() of a worker engine whose worker hangs returns after unloadTimeoutMs, the worker terminated', async ({
  context,
}) => {
  const tab = await openTab(context);
  const r = await tab.evaluate(async () => {
    const w = window as unknown as { WebGGUF: { createWorkerEngine(o: object): Promise<{ unload(): Promise<void> }> } };
    const held = async () => (await navigator.locks.query()).held?.map((l) => l.name) ?? [];
    const engine = await w.WebGGUF.createWorkerEngine({
      model: 'hung.gguf',
      worker: '/pages/hung-worker.js',
      unloadTimeoutMs: 500,
    });
    const before = await held();
    const t0 = performance.now();
    const outcome = await Promise.race([
      engine.unload().then(() => 'resolved'),
      new Promise((res) => setTimeout(() => res('still waiting after 15 s'), 15_000)),
    ]);
    const waited = performance.now() - t0;
    // A terminated worker's locks are released: wait (up to 10 s) for that.
    let aliveAfter = true;
    for (let i = 0; i < 100 && aliveAfter; i++) {
      await new Promise((res) => setTimeout(res, 100));
      aliveAfter = (await held()).includes('webgguf-test-hung-worker');
    }
    return {
      outcome,
      waited,
      aliveBefore: before.includes('webgguf-test-hung-worker'),
      aliveAfter,
      releasedAfterMs: performance.now() - t0,
    };
  });
  console.log(JSON.stringify(r));
  expect(r.outcome).toBe('resolved');
  expect(r.waited).toBeGreaterThanOrEqual(400);
  expect(r.waited).toBeLessThan(10_000);
  expect(r.aliveBefore).toBe(true);
  expect(r.aliveAfter).toBe(false);
});

test('a worker script that fails to load rejects with network, shared or dedicated', async ({ context }) => {
  const tab = await openTab(context);
  const r = await load(tab, { ...LOAD, worker: '/pages/no-such-worker.js' });
  console.log(r.message);
  expect(r).toMatchObject({ ok: false, isLlmError: true, code: 'network' });
  const fallback = await openTab(context, '?noshared=1');
  const d = await load(fallback, { ...LOAD, worker: '/pages/no-such-worker.js' });
  console.log(d.message);
  expect(d).toMatchObject({ ok: false, isLlmError: true, code: 'network' });
});
