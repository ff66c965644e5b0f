/**
 * Benchmark of the WASM Q4_0 matvec (decode's dominant cost): GB/s of weight bytes streamed for 896×896,
 * 4864×896 and 2048×2048, per kernel build and for 1 and 2 threads, through `Ops.matmul` with one token (the Q8
 * activation is cached across repeats, as in decode after the first matmul of a normed x). Never gating.
 * Run: node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/wasm-kernels.bench.ts [ms-per-case]
 */

import v8 from 'node:v8';
import type { Ops } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';

/** [rows, k] of the matrices (Qwen2.5-0.5B's attention/FFN shapes and a square one). */
const SHAPES: [number, number][] = [
  [896, 896],
  [4864, 896],
  [2048, 2048],
];

/** Random Q4_0 blocks with a sane f16 scale (0.01). */
function randomQ4_0(rows: number, k: number): Uint8Array {
  const nb = (rows * k) / 32;
  const bytes = new Uint8Array(nb * 18);
  let s = 12345;
  for (let i = 0; i < bytes.length; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    bytes[i] = s >>> 24;
  }
  for (let b = 0; b < nb; b++) {
    bytes[b * 18] = 0x1f; // f16 0x211f ≈ 0.01
    bytes[b * 18 + 1] = 0x21;
  }
  return bytes;
}

/** Median seconds of one matmul of `rows`×`k`. */
async function timeMatmul(ops: Ops, rows: number, k: number, budgetMs: number): Promise<number> {
  const w = await ops.uploadWeight({ name: `w${rows}x${k}`, type: GgmlType.Q4_0, shape: [k, rows] }, randomQ4_0(rows, k));
  const xTable = new Float32Array(k).map((_, i) => Math.sin(i));
  const table = await ops.uploadWeight({ name: `x${k}`, type: GgmlType.F32, shape: [k, 1] }, new Uint8Array(xTable.buffer));
  const x = ops.createActivation('x', 1, k);
  const out = ops.createActivation('out', 1, rows);
  ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
  ops.embed(x, table, 1);
  const samples: number[] = [];
  const end = performance.now() + budgetMs;
  for (let i = 0; i < 5; i++) ops.matmul(out, x, w, 1); // warm-up
  while (performance.now() < end || samples.length < 5) {
    const reps = 10;
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) ops.matmul(out, x, w, 1);
    samples.push((performance.now() - t0) / reps / 1000);
  }
  ops.endStep();
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1];
}

/** Prints one line per (variant, threads, shape): ms per matvec and GB/s of Q4_0 weights. */
export async function main(args: string[] = []): Promise<number> {
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  const budgetMs = Number(args[0] ?? 400);
  const f = detectWasmFeatures();
  console.log(`features: simd128 ${f.simd128}, relaxed-simd ${f.relaxedSimd}, threads ${f.threads}`);
  const variants: WasmVariant[] = ['scalar', 'simd128', ...(f.relaxedSimd ? (['relaxed-simd'] as const) : [])];
  for (const variant of variants) {
    for (const threads of f.threads ? [1, 2] : [1]) {
      const ops = await createWasmOps({ variant, threads });
      for (const [rows, k] of SHAPES) {
        const sec = await timeMatmul(ops, rows, k, budgetMs);
        const gbps = (rows * k * 18) / 32 / sec / 1e9;
        console.log(
          `${ops.description.padEnd(30)} Q4_0 ${String(rows).padStart(4)}×${String(k).padEnd(4)} ` +
            `${(sec * 1e3).toFixed(3).padStart(7)} ms  ${gbps.toFixed(2).padStart(6)} GB/s`,
        );
      }
      ops.destroy();
    }
  }
  return 0;
}
