/**
 * The hostile-model suite through the worker engine (issue #21): models generated at test time from stories260K with
 * one field changed each (test/helpers/hostile-models.ts), served from a 127.0.0.1 server this spec starts, loaded in
 * Chromium with `createWorkerEngine` — by URL (the header is read and the memory plan checked before any download)
 * and as a Blob. Every case must reject with a clean `LlmError` of the expected code naming the real cause, within
 * a time bound: no crashed tab, no hung worker. The in-thread half is test/unit/model/hostile-models.test.ts.
 */

import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { HOSTILE_CASES, hostileModelBytes } from '../helpers/hostile-models.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const IIFE_DIR = resolve(REPO_ROOT, 'dist/iife');
/** A case slower than this is a hang (the worker loads a 1 MB model in about a second). */
const CASE_BOUND_MS = 60_000;

/** The cases run through the worker: the crashing counts, and one of each misleading-error kind. */
const WORKER_CASES = [
  'block_count 2^31',
  'block_count 2^40 (u64)',
  'block_count 0',
  'n_embd / n_head not an integer, no key_length',
  'NaN rms epsilon',
  'rope.freq_base 0',
  'NaN weight',
  'finite weights that overflow to non-finite logits',
  'all-zero output weights',
  'non-string general.architecture',
  'non-string chat_template',
  'vocabulary size ≠ token_embd rows',
  'tensor data beyond the end of the file',
];

let server: StaticServer;
let dir: string;

test.beforeAll(async () => {
  if (!existsSync(resolve(IIFE_DIR, 'webgguf.js')))
    throw new Error(`${IIFE_DIR}/webgguf.js is missing: run \`npm run build\` first`);
  dir = mkdtempSync(join(tmpdir(), 'webgguf-hostile-'));
  for (const [i, name] of WORKER_CASES.entries()) {
    const c = HOSTILE_CASES.find((x) => x.name === name);
    if (!c) throw new Error(`no hostile case named ${name}`);
    writeFileSync(join(dir, `case-${i}.gguf`), await hostileModelBytes(c));
  }
  server = await startStaticServer({
    '/cdn/webgguf/': IIFE_DIR,
    '/pages/': resolve(REPO_ROOT, 'test/e2e/support'),
    '/hostile/': dir,
  });
});

test.afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Outcome = { ok: true } | { ok: false; isLlmError: boolean; code: string | null; message: string; ms: number };

for (const mode of ['url', 'blob'] as const) {
  test(`hostile models through createWorkerEngine (${mode}) fail with a clean LlmError naming the cause`, async ({
    page,
  }) => {
    test.setTimeout(WORKER_CASES.length * CASE_BOUND_MS + 60_000);
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('crash', () => pageErrors.push('page crashed'));
    await page.goto(server.url('/pages/hostile.html'));
    for (const [i, name] of WORKER_CASES.entries()) {
      const c = HOSTILE_CASES.find((x) => x.name === name)!;
      const url = server.url(`/hostile/case-${i}.gguf`);
      const outcome = await page.evaluate(
        async ({ url, mode }): Promise<Outcome> => {
          const w = window as unknown as {
            WebGGUF: {
              LlmError: new (...a: never[]) => Error;
              createWorkerEngine(o: object): Promise<{ unload(): Promise<void> }>;
            };
          };
          const t0 = performance.now();
          try {
            const model = mode === 'url' ? url : await (await fetch(url)).blob();
            const engine = await w.WebGGUF.createWorkerEngine({ model, backend: 'wasm', contextLength: 64, slots: 1 });
            await engine.unload();
            return { ok: true };
          } catch (e) {
            const err = e as { code?: string; message?: string };
            return {
              ok: false,
              isLlmError: e instanceof w.WebGGUF.LlmError,
              code: err.code ?? null,
              message: String(err.message ?? e),
              ms: performance.now() - t0,
            };
          }
        },
        { url, mode },
      );
      expect(outcome.ok, `${name}: loaded instead of failing`).toBe(false);
      if (outcome.ok) continue;
      expect({ name, isLlmError: outcome.isLlmError, code: outcome.code }).toEqual({
        name,
        isLlmError: true,
        code: c.code,
      });
      expect(outcome.message, name).toMatch(c.message);
      if (c.notMessage) expect(outcome.message, name).not.toMatch(c.notMessage);
      expect(outcome.ms, name).toBeLessThan(CASE_BOUND_MS);
    }
    expect(pageErrors).toEqual([]);
  });
}
