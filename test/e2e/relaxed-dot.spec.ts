/**
 * The relaxed-dot WASM kernel build in real Chromium (wasm/assembly/simd-dot.ts USE_DOT_ADD): where this Chromium
 * lowers `i32x4.relaxed_dot_i8x16_i7x16_add_s` to AVX-VNNI's `vpdpbusd` (src/backend/wasm/dot-add-probe.ts: 'fast'),
 * the build is what `createWasmOps` picks, and every quantized matmul it changes (Q8_0 stored bytes as the unsigned
 * operand, the one-token Q4_K step, the shared dot helpers) equals the relaxed-simd build's output bit for bit — rows off 4-row
 * groups, token counts around the 1/4/8-token tiles, one and two threads. On a CPU without such a lowering the spec
 * checks that the build is not picked.
 */

import { resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { REPO_ROOT, buildPageBundle } from './support/page-setup.js';
import { type StaticServer, startStaticServer } from './support/static-server.js';
import { writeFileSync } from 'node:fs';

const BUNDLE_DIR = resolve(REPO_ROOT, 'test-results/e2e-bundles/relaxed-dot');
let server: StaticServer;

test.beforeAll(async () => {
  await buildPageBundle('test/e2e/pages/relaxed-dot-entry.ts', BUNDLE_DIR);
  writeFileSync(
    resolve(BUNDLE_DIR, 'index.html'),
    '<!doctype html><meta charset="utf-8"><title>loading</title><script type="module" src="./relaxed-dot-entry.js"></script>\n',
  );
  server = await startStaticServer({ '/app/': BUNDLE_DIR });
});

test.afterAll(async () => {
  await server?.close();
});

test('the relaxed-dot build equals the relaxed-simd build bit for bit where Chromium runs it', async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto(server.url('/app/index.html'));
  await page.waitForFunction(() => document.title === 'relaxed-dot ready');
  const { dotAdd, results } = await page.evaluate(() => window.webggufRelaxedDot.compare());
  test.info().annotations.push({ type: 'dot-add lowering', description: dotAdd });
  if (dotAdd !== 'fast') {
    expect(results).toEqual([]);
    return;
  }
  console.log(`relaxed-dot: ${results.length} comparisons, ${results.reduce((a, r) => a + r.outputs, 0)} outputs`);
  expect(new Set(results.map((r) => r.type))).toEqual(new Set(['Q8_0', 'Q4_0', 'Q5_0', 'Q4_K', 'Q5_K', 'Q6_K']));
  expect(results.filter((r) => r.differing > 0)).toEqual([]);
});
