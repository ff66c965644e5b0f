/**
 * The decode matvec paths of every kernel build (scalar, simd128, relaxed-simd when this Node can enable it), called
 * directly on one memory: Q4_0's two-rows-at-a-time dot, Q8_0's relaxed sign-split dot, the Q4_K/Q6_K/Q5_K dots,
 * MXFP4's swizzle lookup, on raw random block bytes (every nibble, every Q8_0 byte including −128, random scales, a
 * quarter of them subnormal halves), with block counts that hit
 * the main loops and their tails (1, 3, 7, 28 blocks) and odd row counts, for 1 token and for 5 (a 4-token tile + 1).
 * Reference: f64 Σ dequantized weight × the kernel's own Q8 activation (read back from memory), so the only
 * tolerance is f32 accumulation order: 2e-6 · Σ|w·x|.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { type GemvKernel, q8RowBytes } from '../../src/backend/wasm/kernel-exports.js';
import { loadKernelModule } from '../../src/backend/wasm/loader.js';
import { interleaveRowPairs, readPairedRow, ROW_PAIR_TYPES, storedRows } from '../../src/backend/wasm/row-pairs.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import { topKScan } from '../../src/backend/cpu/top-k.js';
import { argmaxOf } from '../helpers/compare.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const features = detectWasmFeatures();
const VARIANTS: WasmVariant[] = ['scalar', 'simd128', ...(features.relaxedSimd ? (['relaxed-simd'] as const) : [])];

type Gemv = GemvKernel;
interface Kernels {
  quantize_q8(x: number, xStride: number, n: number, k: number, out: number): void;
  [name: string]: unknown;
}

/** [type, export, byte offsets of the f16 scales in a block, block counts to test]. */
const TYPES: [GgmlType, string, number[], number[]][] = [
  [GgmlType.Q4_0, 'gemv_q4_0', [0], [1, 3, 7, 28, 37, 38]], // odd and even block counts: pair loops and their tails
  [GgmlType.Q4_1, 'gemv_q4_1', [0, 2], [1, 3, 7]],
  [GgmlType.Q5_0, 'gemv_q5_0', [0], [1, 3, 7, 28]],
  [GgmlType.Q5_1, 'gemv_q5_1', [0, 2], [1, 3, 7]],
  [GgmlType.Q8_0, 'gemv_q8_0', [0], [1, 3, 7, 28]],
  [GgmlType.Q4_K, 'gemv_q4_k', [0, 2], [1, 3]],
  [GgmlType.Q5_K, 'gemv_q5_k', [0, 2], [1, 2]],
  [GgmlType.Q6_K, 'gemv_q6_k', [208], [1, 3]],
  [GgmlType.MXFP4, 'gemv_mxfp4', [], [1, 3, 7, 28, 37, 38]], // E8M0 scale byte planted below; row pairs as Q4_0
];

/**
 * Logit rows for the argmax / top-k kernels: every length up to `maxLen` with many ties, scattered NaNs, leading
 * NaNs, all −∞, −∞ then a NaN, alternating −∞; then a vocabulary-sized random row and an ascending one.
 */
function logitRows(maxLen: number, seed: number): Float32Array[] {
  const rows: Float32Array[] = [];
  for (let n = 0; n <= maxLen; n++) {
    const r = randomBytes(n, n + seed);
    rows.push(Float32Array.from(r, (b) => (b % 5) - 2));
    rows.push(Float32Array.from(r, (b, i) => (i % 3 === 1 ? NaN : b - 128)));
    rows.push(Float32Array.from(r, (b, i) => (i === 0 ? NaN : b)));
    rows.push(Float32Array.from(r, (b, i) => (i < 3 ? NaN : b)));
    rows.push(new Float32Array(n).fill(-Infinity));
    rows.push(Float32Array.from(r, (_b, i) => (i < n - 1 ? -Infinity : NaN)));
    rows.push(Float32Array.from(r, (b, i) => (i % 2 ? -Infinity : b % 3)));
  }
  const big = randomBytes(151936 * 4, seed);
  rows.push(Float32Array.from({ length: 151936 }, (_, i) => big[4 * i] + big[4 * i + 1] / 256 - 128));
  rows.push(Float32Array.from({ length: 151936 }, (_, i) => i / 151936)); // ascending: every value enters a top-k
  return rows;
}

/** One build's kernels over a fresh memory of `pages` 64 KiB pages. */
async function instantiate(variant: WasmVariant, pages: number): Promise<{ memory: WebAssembly.Memory; k8: Kernels }> {
  const memory = new WebAssembly.Memory({ initial: pages });
  const k8 = new WebAssembly.Instance(await loadKernelModule(variant, false), { env: { memory } })
    .exports as unknown as Kernels;
  return { memory, k8 };
}

/** Deterministic bytes (xorshift32). */
function randomBytes(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    b[i] = s >>> 24;
  }
  return b;
}

/**
 * An f16 in [2^-9, 2^-6) with a random sign (sane block scales: no inf/NaN, no huge sums), or for a quarter of the
 * bytes a subnormal half (exponent 0, as K-quant super-block scales of small weights often are: f16-scales.ts).
 */
function f16Scale(r: number): number {
  if (((r >> 3) & 3) === 0) return ((r & 1) << 15) | ((r * 37) & 0x3ff);
  return ((r & 1) << 15) | ((6 + ((r >> 1) & 3)) << 10) | ((r * 37) & 0x3ff);
}

describe('wasm decode matvecs on raw blocks, every build', () => {
  for (const variant of VARIANTS) {
    for (const [type, name, f16At, blockCounts] of TYPES) {
      it(`${variant} ${name}`, async () => {
        const qt = getQuantType(type);
        const module = await loadKernelModule(variant, false);
        const memory = new WebAssembly.Memory({ initial: 64 });
        const k8 = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as Kernels;
        const gemv = k8[name] as Gemv;
        for (const nb of blockCounts) {
          for (const [rows, n] of [
            [5, 1],
            [3, 5],
          ]) {
            const k = nb * qt.blockElements;
            const wBytes = randomBytes(rows * nb * qt.blockBytes, nb * 131 + rows + type);
            for (let b = 0; b < rows * nb; b++) {
              for (const at of f16At) {
                const h = f16Scale(wBytes[b * qt.blockBytes + at]);
                wBytes[b * qt.blockBytes + at] = h & 0xff;
                wBytes[b * qt.blockBytes + at + 1] = h >> 8;
              }
              // MXFP4: E8M0 exponent 118 … 133, scales 2^-10 … 2^5 (no overflow to inf); every 5th block 0 or 1,
              // the subnormal scales 2^-128, 2^-127 (their products stay normal f32 against the activation scale).
              if (type === GgmlType.MXFP4) {
                const e = wBytes[b * qt.blockBytes]!;
                wBytes[b * qt.blockBytes] = b % 5 === 4 ? e & 1 : 118 + (e & 15);
              }
            }
            // Layout (bytes): weights at 0 (Q4_0 / Q8_0 in the backend's row-pair layout, padded to even rows),
            // f32 x [n, k], Q8 x [n, q8RowBytes(k)], out [n, rows].
            const pairBlock = ROW_PAIR_TYPES.get(type) ?? 0;
            const stored = pairBlock ? new Uint8Array(storedRows(rows) * nb * qt.blockBytes) : wBytes;
            if (pairBlock) interleaveRowPairs(wBytes, stored, rows, nb * qt.blockBytes, pairBlock);
            const W = 0;
            const X = (stored.length + 15) & ~15;
            const XQ = X + n * k * 4;
            const OUT = XQ + ((n * q8RowBytes(k) + 15) & ~15);
            new Uint8Array(memory.buffer).set(stored, W);
            const x = new Float32Array(memory.buffer, X, n * k);
            for (let i = 0; i < x.length; i++) x[i] = Math.sin(i * 0.37 + nb) * (1 + (i % 7));
            k8.quantize_q8(X, k, n, k, XQ);
            // All rows at once, then as two thread chunks split mid-pair (an unpaired first and last row).
            for (const split of [rows, 1]) {
              new Float32Array(memory.buffer, OUT, n * rows).fill(NaN);
              gemv(W, XQ, OUT, k, 0, split, n, rows);
              if (split < rows) gemv(W, XQ, OUT, k, split, rows, n, rows);
              const got = new Float32Array(memory.buffer.slice(OUT, OUT + n * rows * 4));
              const deq = new Float32Array(rows * k);
              qt.dequantizeRow(wBytes, deq, rows * k);
              for (let t = 0; t < n; t++) {
                const base = XQ + t * q8RowBytes(k);
                const qs = new Int8Array(memory.buffer, base, k);
                const d = new Float32Array(memory.buffer, base + k, k / 32);
                for (let r = 0; r < rows; r++) {
                  let want = 0;
                  let mag = 0;
                  for (let i = 0; i < k; i++) {
                    const p = deq[r * k + i] * qs[i] * d[i >> 5];
                    want += p;
                    mag += Math.abs(p);
                  }
                  const diff = Math.abs(got[t * rows + r] - want);
                  if (!(diff <= 2e-6 * mag + 1e-30)) {
                    expect.fail(
                      `${variant} ${name} nb=${nb} rows=${rows} n=${n} split ${split}: out[${t}, ${r}] = ${got[t * rows + r]}, f64 ${want}, |Δ| ${diff}`,
                    );
                  }
                }
              }
            }
          }
        }
      });
    }
  }

  it('interleave_row_pairs (in place, every build) matches the reference layout for odd and even row counts', async () => {
    for (const variant of VARIANTS) {
      const { memory, k8 } = await instantiate(variant, 4);
      const interleave = k8.interleave_row_pairs as (
        w: number,
        nRows: number,
        rowBytes: number,
        blockBytes: number,
        scratch: number,
      ) => void;
      for (const blockBytes of [17, 18, 22, 34]) {
        for (const [rows, nb] of [
          [1, 1],
          [2, 3],
          [5, 7],
          [6, 28],
        ]) {
          const rowBytes = nb * blockBytes;
          const src = randomBytes(rows * rowBytes, rows * 31 + nb + blockBytes);
          const want = new Uint8Array(storedRows(rows) * rowBytes);
          interleaveRowPairs(src, want, rows, rowBytes, blockBytes);
          const u8 = new Uint8Array(memory.buffer);
          u8.fill(0xee, 0, 65536); // the padding row must come out zero, whatever was there
          u8.set(src, 0);
          interleave(0, rows, rowBytes, blockBytes, 32768);
          expect(u8.slice(0, want.length), `${variant} ${blockBytes}-byte blocks, ${rows} rows × ${nb}`).toEqual(want);
          const back = new Uint8Array(rowBytes);
          for (let r = 0; r < rows; r++) {
            readPairedRow(want, 0, r, rowBytes, blockBytes, back);
            expect(back).toEqual(src.subarray(r * rowBytes, (r + 1) * rowBytes));
          }
        }
      }
    }
  });

  it('argmax_f32 (every build) equals a first-index scalar scan on edge-case rows (logitRows)', async () => {
    const cases = logitRows(40, 7);
    for (const variant of VARIANTS) {
      const { memory, k8 } = await instantiate(variant, 16);
      const argmax = k8.argmax_f32 as (x: number, n: number) => number;
      for (const c of cases) {
        new Float32Array(memory.buffer, 64, c.length).set(c);
        expect(
          argmax(64, c.length),
          `${variant} [${Array.from(c.subarray(0, 12)).join(', ')}${c.length > 12 ? ', …' : ''}]`,
        ).toBe(argmaxOf(c)); // `if (d[j] > d[best]) best = j`
      }
    }
  });

  it('topk_f32 (every build) equals the reference insertion scan on edge-case rows, k 0…9, 40 and 128', async () => {
    const cases = logitRows(24, 11);
    for (const variant of VARIANTS) {
      const { memory, k8 } = await instantiate(variant, 16);
      const topk = k8.topk_f32 as (x: number, n: number, k: number, ids: number) => number;
      for (const c of cases) {
        for (const k of c.length > 1000 ? [1, 40, 128] : [0, 1, 2, 3, 5, 9, 40]) {
          new Float32Array(memory.buffer, 1024, c.length).set(c);
          const count = topk(1024, c.length, Math.min(k, c.length), 64);
          const got = Array.from(new Int32Array(memory.buffer, 64, count));
          expect(
            got,
            `${variant} k ${k} [${Array.from(c.subarray(0, 10)).join(', ')}${c.length > 10 ? ', …' : ''}]`,
          ).toEqual(Array.from(topKScan(c, k).ids));
        }
      }
    }
  });

  it('Q8_0 weights of −128 are exact in the relaxed sign-split dot (one row, and a stored row pair)', async () => {
    const variant: WasmVariant = features.relaxedSimd ? 'relaxed-simd' : 'simd128';
    const memory = new WebAssembly.Memory({ initial: 4 });
    const k8 = new WebAssembly.Instance(await loadKernelModule(variant, false), { env: { memory } })
      .exports as unknown as Kernels;
    const k = 64;
    for (const rows of [1, 2]) {
      const w = new Uint8Array(rows * 2 * 34).fill(0x80); // two blocks of −128 per row, scale 1.0
      for (let b = 0; b < 2 * rows; b++) w.set([0x00, 0x3c], b * 34);
      const stored = new Uint8Array(storedRows(rows) * 2 * 34); // row-pair layout (a zero padding row for one row)
      interleaveRowPairs(w, stored, rows, 2 * 34, 34);
      new Uint8Array(memory.buffer).set(stored, 0);
      const x = new Float32Array(memory.buffer, 256, k).fill(-1); // quantizes to −127, d = 1/127
      k8.quantize_q8(256, k, 1, k, 1024);
      (k8.gemv_q8_0 as Gemv)(0, 1024, 2048, k, 0, rows, 1, rows);
      expect(x.length).toBe(k);
      for (let r = 0; r < rows; r++) expect(new Float32Array(memory.buffer, 2048, rows)[r]).toBeCloseTo(128 * 64, 2);
    }
  });
});
