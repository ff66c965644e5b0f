/**
 * What this machine's WASM engine gives the quantized tiles at best: the inner patterns of the multi-token matmuls
 * with their operands in registers (no loads of weights, no per-block scale steps, no spills), in GMAC per CPU-second
 * of one thread, beside the raw rates of the instructions they are made of. A tile cannot beat its pattern's ceiling,
 * so `gemv_*_r4` rates from wasm-kernels.bench.ts read against these say how much of a tile is overhead and how much
 * a new arrangement of the same instructions could gain at most (BENCHMARKS.md, "Q8_0 tile ceilings"). Never gating.
 * Patterns (per 16-byte vector op; a "token" is one activation splat):
 *   q8-nibble  Q8_0 as two 4-bit planes (gemv-q8-rows4.ts): splat, 2 × i16 relaxed dot, 2 × i16 add = 16 MACs
 *   q4         a 4-bit weight (gemv-stored-rows4.ts): splat, i16 relaxed dot, i16 add = 16 MACs
 *   i16-pair   8-bit values widened to i16: shuffle-splat, i32x4.dot_i16x8_s, i32 add = 8 MACs
 * Run: node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/wasm-dot-ceiling.bench.ts [iterations]
 */

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import asc from 'assemblyscript/asc';

/** AssemblyScript source of the probes: each runs `n` iterations over registers, reading memory only for splats. */
const SOURCE = `
export function dots(n: i32, p: usize): void {
  let a0 = v128.load(p), a1 = v128.load(p, 16), a2 = v128.load(p, 32), a3 = v128.load(p, 48);
  let a4 = v128.load(p, 64), a5 = v128.load(p, 80), a6 = v128.load(p, 96), a7 = v128.load(p, 112);
  const w = v128.load(p, 128);
  for (let i = 0; i < n; i++) {
    a0 = i16x8.relaxed_dot_i8x16_i7x16_s(a0, w); a1 = i16x8.relaxed_dot_i8x16_i7x16_s(a1, w);
    a2 = i16x8.relaxed_dot_i8x16_i7x16_s(a2, w); a3 = i16x8.relaxed_dot_i8x16_i7x16_s(a3, w);
    a4 = i16x8.relaxed_dot_i8x16_i7x16_s(a4, w); a5 = i16x8.relaxed_dot_i8x16_i7x16_s(a5, w);
    a6 = i16x8.relaxed_dot_i8x16_i7x16_s(a6, w); a7 = i16x8.relaxed_dot_i8x16_i7x16_s(a7, w);
  }
  v128.store(p + 512, v128.xor(v128.xor(v128.xor(a0, a1), v128.xor(a2, a3)), v128.xor(v128.xor(a4, a5), v128.xor(a6, a7))));
}
export function adds(n: i32, p: usize): void {
  let a0 = v128.load(p), a1 = v128.load(p, 16), a2 = v128.load(p, 32), a3 = v128.load(p, 48);
  let a4 = v128.load(p, 64), a5 = v128.load(p, 80), a6 = v128.load(p, 96), a7 = v128.load(p, 112);
  const w = v128.load(p, 128);
  for (let i = 0; i < n; i++) {
    a0 = i16x8.add(a0, w); a1 = i16x8.add(a1, w); a2 = i16x8.add(a2, w); a3 = i16x8.add(a3, w);
    a4 = i16x8.add(a4, w); a5 = i16x8.add(a5, w); a6 = i16x8.add(a6, w); a7 = i16x8.add(a7, w);
  }
  v128.store(p + 512, v128.xor(v128.xor(v128.xor(a0, a1), v128.xor(a2, a3)), v128.xor(v128.xor(a4, a5), v128.xor(a6, a7))));
}
export function q8nibble(n: i32, p: usize): void {
  const l = v128.load(p, 128), h = v128.load(p, 144);
  let a0 = i16x8.splat(0), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  let q0 = p, q1 = p + 32, q2 = p + 64, q3 = p + 96;
  for (let i = 0; i < n; i++) {
    let x = v128.load32_splat(q0);
    a0 = i16x8.add(a0, i16x8.relaxed_dot_i8x16_i7x16_s(x, l)); b0 = i16x8.add(b0, i16x8.relaxed_dot_i8x16_i7x16_s(x, h));
    x = v128.load32_splat(q1);
    a1 = i16x8.add(a1, i16x8.relaxed_dot_i8x16_i7x16_s(x, l)); b1 = i16x8.add(b1, i16x8.relaxed_dot_i8x16_i7x16_s(x, h));
    x = v128.load32_splat(q2);
    a2 = i16x8.add(a2, i16x8.relaxed_dot_i8x16_i7x16_s(x, l)); b2 = i16x8.add(b2, i16x8.relaxed_dot_i8x16_i7x16_s(x, h));
    x = v128.load32_splat(q3);
    a3 = i16x8.add(a3, i16x8.relaxed_dot_i8x16_i7x16_s(x, l)); b3 = i16x8.add(b3, i16x8.relaxed_dot_i8x16_i7x16_s(x, h));
    q0 ^= 4; q1 ^= 4; q2 ^= 4; q3 ^= 4;
  }
  v128.store(p + 512, v128.xor(v128.xor(v128.xor(a0, a1), v128.xor(a2, a3)), v128.xor(v128.xor(b0, b1), v128.xor(b2, b3))));
}
export function q4(n: i32, p: usize): void {
  const l = v128.load(p, 128);
  let a0 = i16x8.splat(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  let q0 = p, q1 = p + 32, q2 = p + 64, q3 = p + 96;
  for (let i = 0; i < n; i++) {
    a0 = i16x8.add(a0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(q0), l));
    a1 = i16x8.add(a1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(q1), l));
    a2 = i16x8.add(a2, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(q2), l));
    a3 = i16x8.add(a3, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(q3), l));
    a4 = i16x8.add(a4, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(q0, 16), l));
    a5 = i16x8.add(a5, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(q1, 16), l));
    a6 = i16x8.add(a6, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(q2, 16), l));
    a7 = i16x8.add(a7, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(q3, 16), l));
    q0 ^= 4; q1 ^= 4; q2 ^= 4; q3 ^= 4;
  }
  v128.store(p + 512, v128.xor(v128.xor(v128.xor(a0, a1), v128.xor(a2, a3)), v128.xor(v128.xor(a4, a5), v128.xor(a6, a7))));
}
export function i16pair(n: i32, p: usize): void {
  const w = v128.load(p, 128);
  let c0 = i32x4.splat(0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  let q = p;
  for (let i = 0; i < n; i++) {
    const xa = v128.load(q), xb = v128.load(q, 16);
    c0 = i32x4.add(c0, i32x4.dot_i16x8_s(w, i32x4.shuffle(xa, xa, 0, 0, 0, 0)));
    c1 = i32x4.add(c1, i32x4.dot_i16x8_s(w, i32x4.shuffle(xa, xa, 1, 1, 1, 1)));
    c2 = i32x4.add(c2, i32x4.dot_i16x8_s(w, i32x4.shuffle(xa, xa, 2, 2, 2, 2)));
    c3 = i32x4.add(c3, i32x4.dot_i16x8_s(w, i32x4.shuffle(xa, xa, 3, 3, 3, 3)));
    c4 = i32x4.add(c4, i32x4.dot_i16x8_s(w, i32x4.shuffle(xb, xb, 0, 0, 0, 0)));
    c5 = i32x4.add(c5, i32x4.dot_i16x8_s(w, i32x4.shuffle(xb, xb, 1, 1, 1, 1)));
    c6 = i32x4.add(c6, i32x4.dot_i16x8_s(w, i32x4.shuffle(xb, xb, 2, 2, 2, 2)));
    c7 = i32x4.add(c7, i32x4.dot_i16x8_s(w, i32x4.shuffle(xb, xb, 3, 3, 3, 3)));
    q ^= 32;
  }
  v128.store(p + 512, v128.xor(v128.xor(v128.xor(c0, c1), v128.xor(c2, c3)), v128.xor(v128.xor(c4, c5), v128.xor(c6, c7))));
}
`;

/** Probe name → [what one iteration counts (ops or MACs), unit]. */
const PROBES: Record<string, [number, string]> = {
  dots: [8, 'G i16 relaxed dots/CPU-s'],
  adds: [8, 'G i16x8.add/CPU-s'],
  q8nibble: [4 * 16, 'GMAC/CPU-s (Q8_0 nibble planes: 2 dots per 16 MACs)'],
  q4: [8 * 16, 'GMAC/CPU-s (4-bit weights: 1 dot per 16 MACs)'],
  i16pair: [8 * 8, 'GMAC/CPU-s (i16 pairs: 1 i32x4.dot_i16x8_s per 8 MACs)'],
};

async function compile(): Promise<ArrayBuffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'webgguf-ceiling-'));
  try {
    await writeFile(path.join(dir, 'probe.ts'), SOURCE);
    const out = path.join(dir, 'probe.wasm');
    let log = '';
    const argv = [path.join(dir, 'probe.ts'), '-O3', '--runtime', 'stub', '--initialMemory', '1', '-o', out];
    const { error } = await asc.main([...argv, '--enable', 'simd', '--enable', 'relaxed-simd'], {
      stdout: { write: (s: string) => (log += s) },
      stderr: { write: (s: string) => (log += s) },
    } as Parameters<typeof asc.main>[1]);
    if (error) throw new Error(`asc failed: ${error.message}\n${log}`);
    const bytes = await readFile(out);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const iterations = Number(process.argv[2] ?? 2e7);
  v8.setFlagsFromString('--no-liftoff'); // optimized code from the first call: a long loop never tiers up mid-run
  const module = new WebAssembly.Module(await compile());
  const instance = new WebAssembly.Instance(module, { env: { abort: () => {} } });
  const fns = instance.exports as Record<string, (n: number, p: number) => void>;
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; ${iterations} iterations, best of 3`,
  );
  for (const [name, [perIteration, unit]] of Object.entries(PROBES)) {
    const fn = fns[name];
    if (!fn) throw new Error(`probe ${name} missing`);
    let best = 0;
    for (let r = 0; r < 3; r++) {
      const c0 = process.cpuUsage();
      fn(iterations, 1024);
      const c = process.cpuUsage(c0);
      best = Math.max(best, (iterations * perIteration) / ((c.user + c.system) / 1e6) / 1e9);
    }
    console.log(`${name.padEnd(9)} ${best.toFixed(2)} ${unit}`);
  }
}

await main();
