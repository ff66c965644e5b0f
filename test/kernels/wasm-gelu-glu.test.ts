/**
 * GEGLU on WASM (`Ops.glu(…, 'gelu')`, wasm/assembly/glu.ts): llama.cpp's tanh-approximated GELU times up, against the
 * formula in f64, on every build, over lengths that reach the four-vector steps, the single-vector steps and the
 * scalar tail, x across [−24, 24] (both tails, where 0.5·(1 + tanh z) underflows or saturates). The SIMD lanes
 * compute x · σ(2z) with a division, so their relative error stays small on the negative tail too; the scalar tail
 * (1 − 2 / (e^{2z} + 1)) cancels there, so it is held to an absolute bound only.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { mulberry32 } from '../helpers/mulberry32.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const features = detectWasmFeatures();
const VARIANTS: WasmVariant[] = ['scalar', 'simd128', ...(features.relaxedSimd ? ['relaxed-simd' as const] : [])];

/** llama.cpp's GELU (tanh form) in f64, as x · σ(2z) (1 + tanh z itself cancels in f64 for z below about −18). */
function gelu(x: number): number {
  return x / (1 + Math.exp(-2 * Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)));
}

describe('WASM GEGLU = the tanh GELU formula', () => {
  for (const variant of VARIANTS) {
    it(`${variant}: four-vector steps, single vectors and the scalar tail, both tails of x`, async () => {
      const ops = await createWasmOps({ variant, threads: 1 });
      const rand = mulberry32(7);
      // One row: 72 four-vector steps and 3 scalar lanes; two rows (2310 values): 144 steps, one single vector, 2 lanes.
      const cols = 1155;
      for (const n of [1, 2]) {
        const len = n * cols;
        // x: a ramp over [−24, 24] (every magnitude, both signs) mixed with small values around 0.
        const g = Float32Array.from({ length: len }, (_, i) => (i % 3 === 0 ? rand() * 2 - 1 : (i / len) * 48 - 24));
        const u = Float32Array.from({ length: len }, () => rand() * 4 - 2);
        const ga = ops.createActivation(`g${n}`, n, cols);
        const ua = ops.createActivation(`u${n}`, n, cols);
        const o = ops.createActivation(`o${n}`, n, cols);
        ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
        ops.setRows(ga, g, n);
        ops.setRows(ua, u, n);
        ops.glu(o, ga, ua, n, 'gelu');
        const got = await ops.read(o, n);
        ops.endStep();
        const simd = variant !== 'scalar';
        for (let i = 0; i < len; i++) {
          const want = gelu(g[i]!) * u[i]!;
          const err = Math.abs(got[i]! - want);
          const vectorLane = simd && i < len - (len % 4);
          // Absolute: a few f32 roundings of |x · up|. Relative (vector lanes, results far from underflow): a few
          // roundings, plus f32's rounding of the exponent t = 2z, which e^t turns into a relative error of ~|t|·2⁻²³.
          expect(err, `x=${g[i]} at ${i}`).toBeLessThanOrEqual(2e-6 * Math.max(1, Math.abs(g[i]! * u[i]!)));
          const t = 2 * Math.sqrt(2 / Math.PI) * (g[i]! + 0.044715 * g[i]! ** 3);
          if (vectorLane && Math.abs(want) > 1e-30) {
            expect(err / Math.abs(want), `x=${g[i]} at ${i}`).toBeLessThan(3e-7 * (8 + Math.abs(t)));
          }
        }
      }
    });
  }
});
