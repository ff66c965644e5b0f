/**
 * The WASM f32 KV store (wasm-kv-cache.ts: rows copied within the heap) against the reference backend: contiguous
 * k/v rows (one copy per call) and rows wider than the layer's KV columns (one copy per row), over two steps, read
 * back through attention.
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Ops } from '../../src/backend/ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';
import { mulberry32 } from '../helpers/mulberry32.js';
import { setActivation } from '../helpers/set-activation.js';

const random = (n: number, next: () => number): Float32Array => Float32Array.from({ length: n }, () => next() * 2 - 1);

/** Attention outputs of a 5-token then a 3-token step on slot 1 of layer 1; k/v activations `kCols` wide. */
async function run(ops: Ops, kCols: number): Promise<Float32Array[]> {
  const next = mulberry32(5);
  const nHeads = 2;
  const nKvHeads = 1;
  const headDim = 8;
  const params = {
    nHeads,
    nKvHeads,
    headDim,
    scale: 1 / Math.sqrt(headDim),
    slidingWindow: 0,
    softcap: 0,
    sinks: null,
  };
  ops.createKvCache({ nSlots: 2, contextLength: 16, layers: uniformKvLayers(2, nKvHeads, headDim), kvType: 'f32' });
  const out: Float32Array[] = [];
  for (const [startPos, n] of [
    [0, 5],
    [5, 3],
  ]) {
    const q = await setActivation(ops, random(n * nHeads * headDim, next), n, nHeads * headDim);
    const k = await setActivation(ops, random(n * kCols, next), n, kCols); // [n, kCols]: the layer's 8 columns first
    const v = await setActivation(ops, random(n * kCols, next), n, kCols);
    const o = ops.createActivation('o', n, nHeads * headDim);
    ops.beginStep({ tokens: new Int32Array(n), startPos, slot: 1 });
    ops.storeKv(1, k, v, n);
    ops.attention(o, q, 1, n, params);
    ops.endStep();
    out.push(await ops.read(o, n));
  }
  return out;
}

describe('wasm f32 KV store', () => {
  it.each([8, 24])('k/v rows of %i values (layer columns 8)', async (kCols) => {
    const wasm = await createWasmOps({ variant: 'simd128', threads: 1 });
    const got = await run(wasm, kCols);
    const want = await run(createCpuOps(), kCols);
    wasm.destroy();
    for (let s = 0; s < want.length; s++) {
      expect(got[s].length).toBe(want[s].length);
      for (let i = 0; i < want[s].length; i++) {
        if (!(Math.abs(got[s][i] - want[s][i]) <= 1e-5)) expect.fail(`step ${s} [${i}]: ${got[s][i]} vs ${want[s][i]}`);
      }
    }
  });
});
