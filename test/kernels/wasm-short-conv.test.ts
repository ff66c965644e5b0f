/**
 * lfm2's short convolution on the WASM backend (wasm/assembly/short-conv.ts, `short_conv`) against the plain-TS
 * reference backend: a prefill step from a fresh state, decode steps of one token (the state slides within itself),
 * a step of two, a fresh restart in the same slot, and a second slot — channels not a multiple of 4 (the scalar
 * tail), 3 and 4 taps, every build. Both sides sum in f32 per tap (the reference in f64, rounded once): 1e-5.
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Activation, Ops } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { loadKernelModule } from '../../src/backend/wasm/loader.js';
import { GgmlType } from '../../src/gguf/types.js';
import { mulberry32 } from '../helpers/mulberry32.js';

const C = 22; // channels: five SIMD groups and a tail of 2
const STEPS: readonly (readonly [number, number, number])[] = [
  // [slot, startPos, n]
  [0, 0, 9],
  [0, 9, 1],
  [0, 10, 1],
  [0, 11, 2],
  [1, 0, 3],
  [0, 13, 1],
  [0, 0, 1], // a new sequence in slot 0: the old window must read as zeros
  [1, 3, 5],
];

/** out [n, C] of every step of STEPS on `ops`, concatenated. */
async function run(ops: Ops, taps: number): Promise<Float32Array> {
  const next = mulberry32(taps);
  const rand = (count: number, scale: number) => Float32Array.from({ length: count }, () => scale * (2 * next() - 1));
  const kernel = rand(C * taps, 0.7);
  const w = await ops.uploadWeight(
    { name: 'conv', type: GgmlType.F32, shape: [taps, C] },
    new Uint8Array(kernel.buffer),
  );
  ops.createRecurrentState({ nSlots: 2, layerSizes: [0, (taps - 1) * C] });
  const maxN = Math.max(...STEPS.map((s) => s[2]));
  const bcx: Activation = ops.createActivation('bcx', maxN, 3 * C + 1); // a stride wider than B | C | x
  const out: Activation = ops.createActivation('out', maxN, C + 3);
  const results: number[] = [];
  for (const [slot, startPos, n] of STEPS) {
    ops.beginStep({ tokens: new Int32Array(n), startPos, slot });
    ops.setRows(bcx, rand(n * bcx.cols, 2), n);
    ops.shortConv(out, bcx, 1, n, w);
    ops.endStep();
    const o = await ops.read(out, n);
    for (let t = 0; t < n; t++) results.push(...o.subarray(t * out.cols, t * out.cols + C));
  }
  return Float32Array.from(results);
}

const variants: WasmVariant[] = ['scalar', 'simd128'];
if (detectWasmFeatures().relaxedSimd) variants.push('relaxed-simd');

describe('WASM short convolution (lfm2)', () => {
  it('every build exports the kernel', async () => {
    for (const variant of variants) {
      for (const shared of [false, true]) {
        const names = WebAssembly.Module.exports(await loadKernelModule(variant, shared)).map((e) => e.name);
        expect(names, `${variant}${shared ? ' threads' : ''}`).toContain('short_conv');
      }
    }
  });
  for (const variant of variants) {
    for (const taps of [3, 4]) {
      it(`${variant}, ${taps} taps: prefill, decode, restarts and two slots equal the reference`, async () => {
        const want = await run(createCpuOps(), taps);
        const got = await run(await createWasmOps({ variant, threads: 1 }), taps);
        expect(got.length).toBe(want.length);
        for (let i = 0; i < want.length; i++) {
          if (!(Math.abs(got[i]! - want[i]!) <= 1e-5 * Math.max(1, Math.abs(want[i]!))))
            expect.fail(`out[${i}]: ${got[i]} vs reference ${want[i]}`);
        }
      });
    }
  }
});
