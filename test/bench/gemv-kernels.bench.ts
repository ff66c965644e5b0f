/**
 * Per-kernel decode GEMV bandwidth on large shapes (not gating; meant for a real GPU — on lavapipe it measures the
 * CPU): x[1, K] · Wᵀ for W of 151936×896 (Qwen2.5's output matrix) and 14336×4096 (Llama-3-8B's FFN), Q4_0, Q8_0
 * and Q4_K, on the hardware kernel set. Each case records `reps` matmuls in one submission, times it from submit
 * to readback (median of 5), and reports the GGUF bytes of W per second. Very fast GPUs make small models measure
 * overhead, not kernels; these shapes are large enough to measure the kernel.
 * Usage: node scripts/run-ts.mjs test/bench/gemv-kernels.bench.ts [reps=20] [auto|hardware|software|hardware-nosubgroups]
 *   [int8=auto|on|off] (int8: gemv_sg's Q8 activations for Q4_0 / Q8_0, by default where the adapter offers packed
 *   4×8-bit dot products).
 */

import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import { nodeGpu } from './node-gpu.js';

/** (rows, K); WEBGGUF_GEMV_SHAPES=ROWSxK,… overrides (a small shape smoke-tests the script on lavapipe). */
const SHAPES: readonly (readonly [number, number])[] = process.env['WEBGGUF_GEMV_SHAPES']
  ? process.env['WEBGGUF_GEMV_SHAPES'].split(',').map((s) => s.split('x').map(Number) as [number, number])
  : [
      [151936, 896],
      [14336, 4096],
    ];
const TYPES = [GgmlType.Q4_0, GgmlType.Q8_0, GgmlType.Q4_K];

/** Valid blocks of `type` with random quants and small scales (a pool of 256 rows tiled over the matrix). */
function randomWeight(type: GgmlType, k: number, rows: number): Uint8Array {
  const qt = getQuantType(type);
  const rowBytes = (k / qt.blockElements) * qt.blockBytes;
  const pool = new Float32Array(k * 16); // (16, k)
  let s = 12345;
  for (let i = 0; i < pool.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    pool[i] = (s / 2 ** 32 - 0.5) * 0.1;
  }
  const poolBytes = new Uint8Array(rowBytes * 16);
  qt.quantizeRow!(pool, poolBytes);
  const out = new Uint8Array(rowBytes * rows);
  for (let r = 0; r < rows; r++)
    out.set(poolBytes.subarray((r % 16) * rowBytes, ((r % 16) + 1) * rowBytes), r * rowBytes);
  return out;
}

/** Runs the benchmark; returns the process exit status. */
export async function main(args: string[]): Promise<number> {
  const reps = Number(args[0] ?? 20);
  const kernels = (args[1] ?? 'hardware') as 'auto' | 'hardware' | 'software' | 'hardware-nosubgroups';
  const int8 = args[2] ?? 'auto';
  const ops = await createWebGpuOps({
    gpu: await nodeGpu(),
    kernels,
    ...(int8 === 'auto' ? {} : { int8Dot: int8 === 'on' }),
  });
  console.log(`${ops.description}, kernels ${ops.kernelSet}, int8 ${int8}, ${reps} matmuls per submission`);
  console.log('| shape (rows×K) | type | GGUF MiB | µs / matmul | GB/s |');
  console.log('|---|---|---:|---:|---:|');
  try {
    for (const [rows, k] of SHAPES) {
      const x = ops.createActivation(`x${k}`, 1, k);
      const out = ops.createActivation(`o${rows}`, 1, rows);
      const table = await ops.uploadWeight(
        { name: `x-table${k}`, type: GgmlType.F32, shape: [k, 1] },
        new Uint8Array(new Float32Array(k).fill(0.01).buffer),
      );
      for (const type of TYPES) {
        if (k % getQuantType(type).blockElements !== 0) continue; // Q4_K at K = 896: no such matrix
        const bytes = randomWeight(type, k, rows);
        const w = await ops.uploadWeight({ name: `w.${rows}x${k}.${GgmlType[type]}`, type, shape: [k, rows] }, bytes);
        const times: number[] = [];
        for (let run = 0; run < 6; run++) {
          ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
          ops.embed(x, table, 1);
          for (let i = 0; i < reps; i++) ops.matmul(out, x, w, 1);
          ops.endStep();
          const t0 = performance.now();
          await ops.read(out, 1);
          if (run > 0) times.push((performance.now() - t0) / reps); // run 0 builds pipelines
        }
        times.sort((a, b) => a - b);
        const ms = times[Math.floor(times.length / 2)]!;
        console.log(
          `| ${rows}×${k} | ${GgmlType[type]} | ${(bytes.byteLength / 2 ** 20).toFixed(1)} | ${(ms * 1000).toFixed(1)} | ${(bytes.byteLength / (ms / 1000) / 1e9).toFixed(1)} |`,
        );
      }
    }
  } finally {
    ops.destroy();
  }
  return 0;
}
