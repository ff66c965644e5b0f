/**
 * Q4_0 prefill over splatted activations (wasm/assembly/gemv-q4-0-tiles.ts, src/backend/wasm/splat-activations.ts):
 * relaxed-SIMD matmuls of n ≥ 8 tokens run gemv_q4_0_r4x and equal n one-token matmuls (gemv_q4_0_r4's one-token
 * tile) bit for bit — row counts off a multiple of 4, token counts with 4- and 1-token remainders, rows of 4864 whose
 * tokens span several cache chunks, two threads whose row chunks cut 4-row groups; below 8 tokens, for other
 * kernels and on builds without the splat export or the twin the plain kernel runs on the Q8 rows as they are.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { KernelExports } from '../../src/backend/wasm/kernel-exports.js';
import { createWasmOps, detectWasmFeatures } from '../../src/backend/wasm/index.js';
import { SplatActivations, splatBytes } from '../../src/backend/wasm/splat-activations.js';
import type { WasmHeap } from '../../src/backend/wasm/wasm-heap.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import { mulberry32 } from '../helpers/mulberry32.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const relaxed = detectWasmFeatures().relaxedSimd;

/** [k, nRows, nTokens]: 8-token groups with 4- and 1-token remainders; k = 4864: 2 groups per cache chunk. */
const SHAPES: [number, number, number][] = [
  [64, 6, 8],
  [96, 37, 13],
  [896, 9, 17],
  [4864, 6, 40],
  [4864, 5, 29],
];

describe('Q4_0 tiles over splatted activations', () => {
  for (const threads of [1, 2]) {
    it.runIf(relaxed)(`relaxed-simd ×${threads}: n tokens at once = n one-token matmuls, bit for bit`, async () => {
      const ops = await createWasmOps({ variant: 'relaxed-simd', threads });
      const rand = mulberry32(11 + threads);
      const qt = getQuantType(GgmlType.Q4_0);
      // Two threads split rows only past this much work: 131 rows of 1024 give chunks that cut 4-row groups.
      const shapes: [number, number, number][] = threads === 2 ? [[1024, 131, 21]] : SHAPES;
      for (const [k, nRows, n] of shapes) {
        const w = Float32Array.from({ length: k * nRows }, () => rand() * 2 - 1);
        const bytes = new Uint8Array((w.length / 32) * qt.blockBytes);
        qt.quantizeRow!(w, bytes);
        const weight = await ops.uploadWeight(
          { name: `w${k}x${nRows}`, type: GgmlType.Q4_0, shape: [k, nRows] },
          bytes,
        );
        const x = ops.createActivation(`x${k}`, n, k);
        const one = ops.createActivation(`x1_${k}`, 1, k);
        const out = ops.createActivation(`o${k}`, n, nRows);
        const out1 = ops.createActivation(`o1_${k}`, 1, nRows);
        const xs = Float32Array.from({ length: n * k }, () => (rand() * 2 - 1) * 3);
        ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
        ops.setRows(x, xs, n);
        ops.matmul(out, x, weight, n);
        const all = await ops.read(out, n);
        for (let t = 0; t < n; t++) {
          ops.setRows(one, xs.subarray(t * k, (t + 1) * k), 1);
          ops.matmul(out1, one, weight, 1);
          const row = await ops.read(out1, 1);
          expect(all.subarray(t * nRows, (t + 1) * nRows), `k ${k}, rows ${nRows}, token ${t} of ${n}`).toEqual(row);
        }
        ops.endStep();
      }
    });
  }

  it('picks the splatted kernel for gemv_q4_0_r4 at 8 tokens or more, only where the build has the splat', () => {
    const calls: number[][] = [];
    let allocated = 0;
    const heap = {
      alloc: (byteLength: number) => {
        allocated += byteLength;
        return { byteOffset: 4096, byteLength };
      },
    } as unknown as WasmHeap;
    const withSplat = {
      splat_q8_x4: (...a: number[]) => void calls.push(a),
      gemv_q4_0_r4x: () => {},
    } as unknown as KernelExports;
    const s = new SplatActivations(() => heap);
    expect(s.pick(withSplat, 'gemv_q4_0_r4', 64, 7, 896)).toEqual(['gemv_q4_0_r4', 64]);
    expect(s.pick(withSplat, 'gemv_q4_k_r4', 64, 32, 896)).toEqual(['gemv_q4_k_r4', 64]);
    expect(calls).toEqual([]);
    expect(s.pick(withSplat, 'gemv_q4_0_r4', 64, 13, 896)).toEqual(['gemv_q4_0_r4x', 4096]);
    expect(calls).toEqual([[64, 13, 896, 4096]]);
    expect(allocated).toBe(splatBytes(13, 896));
    expect(splatBytes(13, 896)).toBe(2 * 28 * 8 * 144); // two 8-token groups of 28 blocks
    s.pick(withSplat, 'gemv_q4_0_r4', 64, 9, 896); // fits: no new region
    expect(allocated).toBe(splatBytes(13, 896));
    const old = new SplatActivations(() => heap);
    expect(old.pick({} as KernelExports, 'gemv_q4_0_r4', 64, 32, 896)).toEqual(['gemv_q4_0_r4', 64]);
    // A build with the splat but not this kernel's splatted twin keeps the plain kernel.
    const noTwin = { splat_q8_x4: withSplat.splat_q8_x4 } as unknown as KernelExports;
    expect(old.pick(noTwin, 'gemv_q4_0_r4', 64, 32, 896)).toEqual(['gemv_q4_0_r4', 64]);
  });
});
