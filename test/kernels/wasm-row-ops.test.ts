/**
 * The WASM RMSNorm, residual add and rotary kernels (wasm/assembly/row-ops.ts and rope.ts, through `Ops.rmsNorm` /
 * `Ops.add` / `Ops.rope`) equal the host loops they replace (src/backend/wasm/row-ops.ts `rmsNormRows` / `addRows` /
 * `ropeRotate`, f64 arithmetic of JS numbers) bit for bit, on every build; rope with 'norm' and 'neox' pairs, partial
 * rotary with an odd half, two parameter sets alternating and a new start position (the heap copy of the tables is
 * refreshed when they change). RMSNorm and add: group counts off a multiple of 4 (the rows outside the four-group blocks), group sizes off
 * a multiple of 4 (the lane tail), with and without a weight, per-head groups, in place, values spanning many
 * magnitudes (where a reordered f64 sum or an f32 product would round differently).
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { loadKernelModule } from '../../src/backend/wasm/loader.js';
import type { RopeParams } from '../../src/backend/ops.js';
import { addRows, RopeTables, rmsNormRows, ropeRotate } from '../../src/backend/wasm/row-ops.js';
import { GgmlType } from '../../src/gguf/types.js';
import { mulberry32 } from '../helpers/mulberry32.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const features = detectWasmFeatures();
const VARIANTS: WasmVariant[] = ['scalar', 'simd128', ...(features.relaxedSimd ? ['relaxed-simd' as const] : [])];

/** [rows, cols, group size] */
const SHAPES: [number, number, number][] = [
  [1, 768, 768],
  [7, 37, 37],
  [9, 768, 256], // 27 per-head groups
  [5, 66, 33],
];

/** Values of random sign and magnitude (2^−20 … 2^12). */
function values(n: number, rand: () => number): Float32Array {
  return Float32Array.from({ length: n }, () => (rand() * 2 - 1) * 2 ** Math.floor(rand() * 32 - 20));
}

describe('WASM row ops = host loops, bit for bit', () => {
  for (const variant of VARIANTS) {
    it(`${variant}: rmsNorm (with and without weight, per-head groups, in place) and add`, async () => {
      // The build has the kernels (else the ops fall back to the host loops and this compares those with themselves).
      const names = WebAssembly.Module.exports(await loadKernelModule(variant, false)).map((e) => e.name);
      expect(names).toEqual(expect.arrayContaining(['rms_norm_rows', 'add_rows', 'rope_rows']));
      const ops = await createWasmOps({ variant, threads: 1 });
      const rand = mulberry32(11);
      for (const [n, cols, g] of SHAPES) {
        const xs = values(n * cols, rand);
        const ws = values(g, rand);
        const bs = values(n * cols, rand);
        const weight = await ops.uploadWeight(
          { name: `w${cols}_${g}`, type: GgmlType.F32, shape: [g] },
          new Uint8Array(ws.buffer),
        );
        const x = ops.createActivation(`x${cols}_${g}`, n, cols);
        const b = ops.createActivation(`b${cols}_${g}`, n, cols);
        const out = ops.createActivation(`o${cols}_${g}`, n, cols);
        ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
        ops.setRows(x, xs, n);
        ops.setRows(b, bs, n);
        const host = new Float32Array(3 * n * cols + g); // [x | b | out | w]
        host.set(xs, 0);
        host.set(bs, n * cols);
        host.set(ws, 3 * n * cols);
        const want = (): Float32Array => host.slice(2 * n * cols, 3 * n * cols);
        for (const withWeight of [true, false]) {
          ops.rmsNorm(out, x, withWeight ? weight : null, 1e-6, n, g);
          rmsNormRows(host, 2 * n * cols, 0, withWeight ? 3 * n * cols : -1, g, (n * cols) / g, 1e-6);
          expect(await ops.read(out, n), `rmsNorm ${n}×${cols}/${g} weight ${withWeight}`).toEqual(want());
        }
        ops.add(out, x, b, n);
        addRows(host, 2 * n * cols, 0, n * cols, n * cols);
        expect(await ops.read(out, n), `add ${n}×${cols}`).toEqual(want());
        ops.rmsNorm(x, x, weight, 1e-5, n, g); // in place
        rmsNormRows(host, 0, 0, 3 * n * cols, g, (n * cols) / g, 1e-5);
        expect(await ops.read(x, n), `rmsNorm in place ${n}×${cols}/${g}`).toEqual(host.slice(0, n * cols));
        ops.endStep();
      }
      ops.destroy();
    });
  }
});

/** Rope cases: [params, start position] in call order (alternating sets, then a new start position). */
const ROPES: [RopeParams, number][] = [
  [{ kind: 'neox', headDim: 64, nRot: 64, theta: 10000, freqScale: 1 }, 0],
  [{ kind: 'norm', headDim: 64, nRot: 64, theta: 1e6, freqScale: 0.5 }, 0],
  [{ kind: 'neox', headDim: 64, nRot: 64, theta: 10000, freqScale: 1 }, 0],
  [{ kind: 'neox', headDim: 64, nRot: 64, theta: 10000, freqScale: 1 }, 37],
  [{ kind: 'neox', headDim: 64, nRot: 22, theta: 10000, freqScale: 1 }, 5], // partial rotary, half 11
  [{ kind: 'norm', headDim: 64, nRot: 22, theta: 10000, freqScale: 1 }, 5],
];

describe('WASM rope = host ropeRotate, bit for bit', () => {
  for (const variant of VARIANTS) {
    it(`${variant}: norm and neox, partial rotary, alternating parameters, new positions`, async () => {
      const ops = await createWasmOps({ variant, threads: 1 });
      const rand = mulberry32(12);
      const [n, cols] = [7, 192]; // 3 heads of 64
      const x = ops.createActivation('x', n, cols);
      const tables = new RopeTables();
      const host = new Float32Array(n * cols);
      const params = new Map<string, RopeParams>(); // one object per set, as a model keeps them
      for (const [p0, startPos] of ROPES) {
        const key = JSON.stringify(p0);
        const p = params.get(key) ?? p0;
        params.set(key, p);
        const xs = values(n * cols, rand);
        ops.beginStep({ tokens: new Int32Array(n), startPos, slot: 0 });
        ops.setRows(x, xs, n);
        ops.rope(x, n, p);
        host.set(xs);
        const { cos, sin } = tables.get(p, startPos, n);
        ropeRotate(host, 0, cols, n, p, cos, sin);
        expect(await ops.read(x, n), `${p.kind} nRot ${p.nRot} at ${startPos}`).toEqual(host);
        ops.endStep();
      }
      ops.destroy();
    });
  }
});
