/**
 * Prototype comparison (never gating): Q4_0 multiply-adds per CPU-second of the shipped row-pair kernel
 * (`gemv_q4_0`: two rows × four tokens per prefill tile, rowPairQ45 for one token) vs the 4-row "lanes = rows" layout
 * in wasm/proto/gemv-q4-0-rows4.ts, on the same random weights and Q8 activations in one process, after checking both
 * give the same outputs. Compiles wasm/proto/index.ts (the shipped kernels + the prototype) with asc into a temp dir
 * (relaxed-SIMD build, the shipped build's flags); nothing downloaded.
 * Run: node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/rows4-proto.bench.ts [rows k tokens…]
 *   (default 4864 896 1 4 32; each token count needs n % 4 == 0 or n == 1)
 */

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import asc from 'assemblyscript/asc';

type Kernel = (
  w: number,
  x: number,
  out: number,
  k: number,
  r0: number,
  r1: number,
  n: number,
  outStride: number,
) => void;

interface ProtoExports {
  quantize_q8(x: number, xStride: number, n: number, k: number, out: number): void;
  interleave_row_pairs(w: number, nRows: number, rowBytes: number, blockBytes: number, scratch: number): void;
  gemv_q4_0: Kernel;
  gemv_q4_0_rows4: Kernel;
  gemv_q4_0_rows4_one: Kernel;
}

async function compileProto(): Promise<ArrayBuffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'webgguf-proto-'));
  const file = path.join(dir, 'proto.wasm');
  let log = '';
  const flags = [
    '-O3',
    '--noAssert',
    '--runtime',
    'stub',
    '--importMemory',
    '--enable',
    'simd',
    '--enable',
    'relaxed-simd',
  ];
  const { error } = await asc.main(['wasm/proto/index.ts', ...flags, '-o', file], {
    stdout: { write: (s: string) => (log += s) },
    stderr: { write: (s: string) => (log += s) },
  } as never);
  if (error) throw new Error(`asc failed: ${error.message}\n${log}`);
  const bytes = await readFile(file);
  await rm(dir, { recursive: true, force: true });
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** Median process CPU seconds per call of `f` over ~`ms` of wall time, in 5 slices. */
function cpuPerCall(f: () => void, ms: number): number {
  const slices: number[] = [];
  for (let s = 0; s < 5; s++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let reps = 0;
    while (performance.now() - t0 < ms / 5) {
      f();
      reps++;
    }
    const c = process.cpuUsage(c0);
    slices.push((c.user + c.system) / 1e6 / reps);
  }
  return slices.sort((a, b) => a - b)[2];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).map(Number);
  const [rows, k] = [args[0] || 4864, args[1] || 896];
  const tokenCounts = args.length > 2 ? args.slice(2) : [1, 4, 32];
  const nMax = Math.max(...tokenCounts);
  const memory = new WebAssembly.Memory({ initial: 8192 });
  const module = await WebAssembly.compile(await compileProto());
  const instance = await WebAssembly.instantiate(module, { env: { memory, abort() {} } });
  const e = instance.exports as unknown as ProtoExports;
  const u8 = new Uint8Array(memory.buffer);
  const f32 = new Float32Array(memory.buffer);
  const dv = new DataView(memory.buffer);
  let seed = 12345;
  const rnd = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const nb = k / 32;
  const rowBytes = nb * 18;
  // GGUF layout [rows][nb] of {f16 d, u8 qs[16]}, at W.
  const W = 1 << 20;
  for (let i = 0; i < rows * nb; i++) {
    dv.setUint16(W + i * 18, 0x2000 + Math.floor(rnd() * 0x400), true);
    for (let j = 0; j < 16; j++) u8[W + i * 18 + 2 + j] = Math.floor(rnd() * 256);
  }
  const pairs = W + rows * rowBytes + 4096; // the shipped row-pair layout
  u8.copyWithin(pairs, W, W + rows * rowBytes);
  const scratch = pairs + rows * rowBytes + rowBytes + 4096;
  e.interleave_row_pairs(pairs, rows, rowBytes, 18, scratch);
  const rows4 = scratch + 2 * rowBytes + 4096; // [rows / 4][nb] of {f16 d[4], 4 × (4 rows × 4 bytes)}
  for (let g = 0; g < rows / 4; g++) {
    for (let b = 0; b < nb; b++) {
      const pb = rows4 + (g * nb + b) * 72;
      for (let r = 0; r < 4; r++) {
        const src = W + (4 * g + r) * rowBytes + b * 18;
        u8[pb + 2 * r] = u8[src];
        u8[pb + 2 * r + 1] = u8[src + 1];
        for (let j = 0; j < 4; j++) u8.copyWithin(pb + 8 + 16 * j + 4 * r, src + 2 + 4 * j, src + 6 + 4 * j);
      }
    }
  }
  const x = rows4 + (rows / 4) * nb * 72 + 4096; // f32 [nMax, k]
  for (let i = 0; i < nMax * k; i++) f32[(x >> 2) + i] = rnd() * 2 - 1;
  const xq = x + nMax * k * 4 + 4096;
  e.quantize_q8(x, k, nMax, k, xq);
  const o1 = xq + nMax * k * 2 + 4096;
  const o2 = o1 + nMax * rows * 4 + 4096;
  for (const n of tokenCounts) {
    const proto = n === 1 ? e.gemv_q4_0_rows4_one : e.gemv_q4_0_rows4;
    e.gemv_q4_0(pairs, xq, o1, k, 0, rows, n, rows);
    proto(rows4, xq, o2, k, 0, rows / 4, n, rows);
    let maxDiff = 0;
    for (let i = 0; i < n * rows; i++) maxDiff = Math.max(maxDiff, Math.abs(f32[(o1 >> 2) + i] - f32[(o2 >> 2) + i]));
    const macs = rows * k * n;
    for (let round = 0; round < 2; round++) {
      const a = cpuPerCall(() => e.gemv_q4_0(pairs, xq, o1, k, 0, rows, n, rows), 1500);
      const b = cpuPerCall(() => proto(rows4, xq, o2, k, 0, rows / 4, n, rows), 1500);
      console.log(
        `Q4_0 ${rows}×${k} ×${n} tokens: row pairs ${(macs / a / 1e9).toFixed(1)} GMAC/CPU-s, rows4 prototype ` +
          `${(macs / b / 1e9).toFixed(1)} GMAC/CPU-s (${(a / b).toFixed(2)}×), max |Δ| ${maxDiff.toExponential(1)}`,
      );
    }
  }
}

await main();
