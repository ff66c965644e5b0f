/**
 * WASM backend matmul vs the plain-TS reference backend, for every quant type the registry knows, every kernel build
 * (scalar, simd128, relaxed-simd when this Node can enable it) and the two-thread path, on odd shapes (rows not a
 * multiple of 32/256, a single row, one block per row, several tokens).
 * Tolerance (stated, not tuned): quantized weights multiply Q8-rounded activations, so each output may differ from
 * the f64 reference by at most Σ_blocks (amax_x,b / 254) · Σ_{i∈b} |w_i| (half a Q8 step per element) plus f32
 * accumulation (1e-5 · Σ|w·x|); float weights use f32 x, so only the accumulation term applies.
 */

import v8 from 'node:v8';
import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Ops } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType, QUANT_TYPES } from '../../src/quant/index.js';
import { mulberry32 } from '../helpers/mulberry32.js';
import { quantWeightBytes } from '../helpers/quant-weight.js';

// Node 20 hides relaxed SIMD behind a V8 flag; enabling it here (this test process only) lets the relaxed build run.
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const features = detectWasmFeatures();
const CONFIGS: { variant: WasmVariant; threads: number }[] = [
  { variant: 'scalar', threads: 1 },
  { variant: 'simd128', threads: 1 },
  ...(features.relaxedSimd ? [{ variant: 'relaxed-simd' as const, threads: 1 }] : []),
  { variant: features.relaxedSimd ? 'relaxed-simd' : 'simd128', threads: 2 },
];

/** Deterministic uniform [-1, 1) generator (mulberry32). */
function rng(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() * 2 - 1;
}

function randomF32(n: number, rand: () => number, scale = 1): Float32Array {
  return Float32Array.from({ length: n }, () => rand() * scale);
}

/** Shapes [k, nRows, nTokens] for a block size; the last one is big enough to be split across threads. */
function shapes(blockElements: number): [number, number, number][] {
  const b = Math.max(32, blockElements);
  const k = blockElements === 1 ? [7, 67, 1003] : [b, 3 * b, 1024]; // the last shape is ≥ 2^18 multiply-adds: threaded
  return [
    [k[0], 1, 1],
    [k[1], 37, 5], // five tokens: one 4-token tile + one
    [k[2], 131, 2],
    [k[1], 37, 12], // Q4_0: 4-row groups × (8 + 4 tokens), row 36 outside every group
    [k[2], 131, 11], // two 4-token tiles + three, split across threads (chunks may start or end mid-pair)
  ];
}

/** Weight bytes of `type` for random values [nRows, k], plus their exact dequantized f32 values. */
function makeWeight(
  type: GgmlType,
  k: number,
  nRows: number,
  rand: () => number,
): { bytes: Uint8Array; deq: Float32Array } {
  const qt = getQuantType(type);
  const src = randomF32(k * nRows, rand);
  const bytes = quantWeightBytes(qt, src, qt.id * 131 + k + nRows);
  const deq = new Float32Array(k * nRows);
  qt.dequantizeRow(bytes, deq, k * nRows);
  return { bytes, deq };
}

/** Per-output error bound of a Q8-activation dot: half a quantization step of x per element, weighted by |w|. */
function q8Bound(deq: Float32Array, x: Float32Array, k: number, r: number, t: number): number {
  let bound = 0;
  for (let b = 0; b < k; b += 32) {
    let amax = 0;
    let wsum = 0;
    for (let i = b; i < b + 32; i++) {
      amax = Math.max(amax, Math.abs(x[t * k + i]));
      wsum += Math.abs(deq[r * k + i]);
    }
    bound += (amax / 254) * wsum;
  }
  return bound;
}

/** Runs x [n, k] · W [nRows, k]ᵀ on `wasm` and the cpu reference and fails on any output outside the Q8 bound. */
async function checkMatmul(
  wasm: Ops,
  cpu: Ops,
  qt: { id: GgmlType; name: string },
  k: number,
  nRows: number,
  n: number,
  bytes: Uint8Array,
  deq: Float32Array,
  x: Float32Array,
  isFloat: boolean,
): Promise<void> {
  const info = { name: `w_${qt.name}_${k}x${nRows}`, type: qt.id, shape: [k, nRows] };
  const results: Float32Array[] = [];
  for (const ops of [wasm, cpu]) {
    const w = await ops.uploadWeight(info, bytes);
    const xa = ops.createActivation('x', n + 1, k);
    const out = ops.createActivation('out', n + 1, nRows);
    ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
    // Write x through the ops: embed is type-specific, so use a one-row F32 "table" per token.
    const table = await ops.uploadWeight(
      { name: 'xtable', type: GgmlType.F32, shape: [k, n] },
      new Uint8Array(x.buffer.slice(0)),
    );
    ops.endStep();
    ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
    ops.embed(xa, table, n);
    ops.matmul(out, xa, w, n);
    ops.endStep();
    results.push(await ops.read(out, n));
  }
  const [got, want] = results;
  for (let t = 0; t < n; t++) {
    for (let r = 0; r < nRows; r++) {
      let mag = 0;
      for (let i = 0; i < k; i++) mag += Math.abs(deq[r * k + i] * x[t * k + i]);
      const tol = (isFloat ? 0 : q8Bound(deq, x, k, r, t)) + 1e-5 * mag + 1e-6;
      const diff = Math.abs(got[t * nRows + r] - want[t * nRows + r]);
      if (!(diff <= tol)) {
        expect.fail(
          `${qt.name} k=${k} rows=${nRows} n=${n}: out[${t}, ${r}] = ${got[t * nRows + r]}, reference ${want[t * nRows + r]}, |Δ| ${diff} > ${tol}`,
        );
      }
    }
  }
}

const opened: Ops[] = [];
afterAll(() => {
  for (const o of opened) o.destroy();
});

for (const config of CONFIGS) {
  describe(`wasm matmul, ${config.variant} ×${config.threads}`, () => {
    let wasm: Ops;
    const cpu = createCpuOps();
    it('creates the backend', async () => {
      wasm = await createWasmOps(config);
      opened.push(wasm);
      expect(wasm.description).toBe(`wasm ${config.variant} ×${config.threads} thread${config.threads > 1 ? 's' : ''}`);
    });

    for (const qt of QUANT_TYPES) {
      it(`${qt.name} matches the reference within the Q8 rounding bound`, async () => {
        const rand = rng(qt.id * 7919 + 1);
        const isFloat = qt.id === GgmlType.F32 || qt.id === GgmlType.F16 || qt.id === GgmlType.BF16;
        for (const [k, nRows, n] of shapes(qt.blockElements)) {
          const { bytes, deq } = makeWeight(qt.id, k, nRows, rand);
          const x = randomF32(n * k, rand, 2);
          await checkMatmul(wasm, cpu, qt, k, nRows, n, bytes, deq, x, isFloat);
        }
      });
    }

    it('Q8_0 weights of −128 give exact dots in the token tiles and the one-token rows', async () => {
      const rand = rng(4242);
      const qt = getQuantType(GgmlType.Q8_0);
      for (const [k, nRows, n] of [
        [96, 37, 9],
        [1024, 67, 6],
      ]) {
        const { bytes } = makeWeight(GgmlType.Q8_0, k, nRows, rand);
        // Every 7th quant byte (34-byte blocks: f16 scale, then 32 quants) becomes −128, in both rows of each pair.
        for (let i = 0; i < bytes.length; i++) if (i % 34 >= 2 && i % 7 === 0) bytes[i] = 0x80;
        const deq = new Float32Array(k * nRows);
        qt.dequantizeRow(bytes, deq, k * nRows);
        await checkMatmul(wasm, cpu, qt, k, nRows, n, bytes, deq, randomF32(n * k, rand, 2), false);
      }
    });

    it('adds a bias and reuses quantized activations across matmuls of the same x', async () => {
      const rand = rng(99);
      const k = 64;
      const rows = 40;
      const a = makeWeight(GgmlType.Q4_0, k, rows, rand);
      const b = makeWeight(GgmlType.Q8_0, k, rows, rand);
      const bias = randomF32(rows, rand);
      const x = randomF32(2 * k, rand);
      const outs: Float32Array[][] = [];
      for (const ops of [wasm, cpu]) {
        const wa = await ops.uploadWeight({ name: 'a', type: GgmlType.Q4_0, shape: [k, rows] }, a.bytes);
        const wb = await ops.uploadWeight({ name: 'b', type: GgmlType.Q8_0, shape: [k, rows] }, b.bytes);
        const wbias = await ops.uploadWeight(
          { name: 'bias', type: GgmlType.F32, shape: [rows] },
          new Uint8Array(bias.buffer.slice(0)),
        );
        const table = await ops.uploadWeight(
          { name: 'xt', type: GgmlType.F32, shape: [k, 2] },
          new Uint8Array(x.buffer.slice(0)),
        );
        const xa = ops.createActivation('x', 2, k);
        const o1 = ops.createActivation('o1', 2, rows);
        const o2 = ops.createActivation('o2', 2, rows);
        ops.beginStep({ tokens: Int32Array.of(0, 1), startPos: 0, slot: 0 });
        ops.embed(xa, table, 2);
        ops.matmul(o1, xa, wa, 2, wbias);
        ops.matmul(o2, xa, wb, 2);
        ops.scale(xa, -1, 2); // x changed: the next matmul must re-quantize
        ops.matmul(o1, xa, wa, 2, wbias);
        ops.endStep();
        outs.push([await ops.read(o1, 2), await ops.read(o2, 2)]);
      }
      for (let j = 0; j < 2; j++) {
        for (let i = 0; i < outs[0][j].length; i++) expect(Math.abs(outs[0][j][i] - outs[1][j][i])).toBeLessThan(0.05);
      }
    });
  });
}
