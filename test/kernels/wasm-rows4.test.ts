/**
 * The 4-row weight layout of the relaxed-SIMD build (src/backend/wasm/rows4-layout.ts, wasm/assembly/
 * gemv-stored-rows4.ts, gemv-q8-rows4.ts, gemv-q4-k-rows4.ts) for every type the registry gives one (Q4_0, Q4_K;
 * Q8_0, stored with its quants' sign bit flipped): its matmuls equal the simd128 build's row-pair / GGUF-row kernels
 * within f32 rounding (the same integer block sums; only the float order differs) for row counts
 * off a multiple of 4, 1…9, 11 and 17 tokens (the 8-, 4- and 1-token tiles and their mixes) and two threads whose
 * chunks cut 4-row groups; tied tables read back per row (embedding lookups) give the GGUF rows;
 * uploads streamed in pieces rearrange group by group, and a piece starting inside a group is refused. The K-quants'
 * multi-token tiles are bit-identical to their one-token tiles (decode's own loop over whole groups included), and
 * K-quants whose f16 super-block scales are subnormal halves (wasm/assembly/f16-scales.ts) give the same products.
 */

import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures } from '../../src/backend/wasm/index.js';
import {
  interleaveRows4,
  type Rows4Block,
  readRows4Row,
  rows4StoredRows,
} from '../../src/backend/wasm/rows4-layout.js';
import { isLlmError } from '../../src/errors.js';
import { GgmlType } from '../../src/gguf/types.js';
import { firstNonFinite } from '../../src/model/non-finite-scan.js';
import { getQuantType, QUANT_TYPES } from '../../src/quant/index.js';
import type { QuantType } from '../../src/quant/quant-type.js';
import { mulberry32 } from '../helpers/mulberry32.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const ROWS4_TYPES = QUANT_TYPES.filter((t) => t.wasm !== 'dequantize' && t.wasm.rows4 !== undefined);
const relaxed = detectWasmFeatures().relaxedSimd;

/** A type's 4-row block shape (registry `wasm.rows4`). */
function block(qt: QuantType): Rows4Block {
  const r4 = qt.wasm === 'dequantize' ? undefined : qt.wasm.rows4;
  const recode: Rows4Block['recode'] =
    r4!.recode === 'q5_0' ? 1 : r4!.recode === 'q6_k' ? 2 : r4!.recode === 'q5_k' ? 3 : 0;
  return {
    recode,
    blockBytes: qt.blockBytes,
    head: r4!.head,
    tail: r4!.tail,
    flip: r4!.signFlip ? 0x80 : 0,
  };
}

/** A row length of `blocks` blocks of the type (Q4_0 32 elements, K-quants 256). */
function rowLength(qt: QuantType, blocks: number): number {
  return blocks * qt.blockElements;
}

function randomF32(n: number, seed: number, scale = 1): Float32Array {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => (r() * 2 - 1) * scale);
}

function quantize(type: GgmlType, values: Float32Array): Uint8Array {
  const qt = getQuantType(type);
  const bytes = new Uint8Array((values.length / qt.blockElements) * qt.blockBytes);
  qt.quantizeRow!(values, bytes);
  return bytes;
}

/** x [n, k] · W [nRows, k]ᵀ on `ops` (x written through an F32 table's embedding lookup). */
async function matmul(
  ops: Ops,
  type: GgmlType,
  bytes: Uint8Array,
  k: number,
  nRows: number,
  x: Float32Array,
  n: number,
) {
  const w = await ops.uploadWeight({ name: `w${k}x${nRows}`, type, shape: [k, nRows] }, bytes);
  const table = await ops.uploadWeight(
    { name: 'x', type: GgmlType.F32, shape: [k, n] },
    new Uint8Array(x.buffer.slice(0)),
  );
  const xa = ops.createActivation('x', n, k);
  const out = ops.createActivation('out', n, nRows);
  ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(xa, table, n);
  ops.matmul(out, xa, w, n);
  ops.endStep();
  return ops.read(out, n);
}

/**
 * Fails unless got equals want within f32 rounding: 1e-6 of Σ|w·x| per output (w dequantized from `bytes`; the
 * integer block sums are equal, only the order of the f32 scale-and-add steps differs).
 */
function expectClose(
  got: Float32Array,
  want: Float32Array,
  what: string,
  type: GgmlType,
  bytes: Uint8Array,
  x: Float32Array,
  k: number,
): void {
  const nRows = want.length / (x.length / k);
  const w = new Float32Array(nRows * k);
  getQuantType(type).dequantizeRow(bytes, w, nRows * k);
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const [t, r] = [Math.floor(i / nRows), i % nRows];
    let mag = 0;
    for (let j = 0; j < k; j++) mag += Math.abs(w[r * k + j]! * x[t * k + j]!);
    worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / (1e-6 * mag + 1e-6));
  }
  expect(worst, what).toBeLessThanOrEqual(1);
}

describe('4-row layout: JS reference', () => {
  it('reads back every row of every type from a matrix with padding rows', () => {
    for (const qt of ROWS4_TYPES) {
      for (const nRows of [1, 3, 4, 6, 9]) {
        const k = rowLength(qt, 3);
        const src = quantize(qt.id, randomF32(k * nRows, nRows));
        const rowBytes = 3 * qt.blockBytes;
        const dst = new Uint8Array(rows4StoredRows(nRows) * rowBytes).fill(7);
        const b = block(qt);
        interleaveRows4(src, dst, nRows, rowBytes, b);
        // Row 0's first body byte lies after the group block's f16 fields, its sign bit flipped for signed quants;
        // Q5_0's holds quant 0 (nibble | 5th bit << 4) and the low 3 bits of quant 16 above it.
        const [at, qh] = [2 * b.head, src[2 * b.head]! | (src[2 * b.head + 2]! << 8)];
        const want =
          b.recode === 1
            ? (src[at + 4]! & 15) | ((qh & 1) << 4) | (((src[at + 4]! >> 4) & 7) << 5)
            : b.recode === 2
              ? // Q6_K: quant 0 (ql nibble | qh bits << 4) and the low 2 bits of quant 12 above it
                (src[at]! & 15) | ((src[at + 128]! & 3) << 4) | ((src[at + 12]! & 3) << 6)
              : src[at]! ^ b.flip;
        expect(dst[8 * (b.head + b.tail)], `${qt.name} stored quant`).toBe(want);
        if (b.recode === 3) {
          // Q5_K: word 3 (after the scales) starts sub-block pair 0: quant 0 of sub-block 0 and the low 3 bits of 1's.
          const [qs, qh] = [src[at + 44]!, src[at + 12]!];
          const pair = (qs & 15) | ((qh & 1) << 4) | (((qs >> 4) & 7) << 5);
          expect(dst[8 * (b.head + b.tail) + 16 * 3], `${qt.name} stored pair`).toBe(pair);
        }
        const row = new Uint8Array(rowBytes);
        for (let r = 0; r < rows4StoredRows(nRows); r++) {
          readRows4Row(dst, 0, r, rowBytes, b, row);
          const want = r < nRows ? src.subarray(r * rowBytes, (r + 1) * rowBytes) : new Uint8Array(rowBytes);
          expect(Array.from(row), `${qt.name} rows ${nRows} row ${r}`).toEqual(Array.from(want));
        }
      }
    }
  });
});

describe.runIf(relaxed)('4-row layout: relaxed-SIMD kernels vs the simd128 row-pair kernels', () => {
  let r4: Ops;
  let r4x2: Ops;
  let pairs: Ops;
  beforeAll(async () => {
    r4 = await createWasmOps({ variant: 'relaxed-simd', threads: 1 });
    r4x2 = await createWasmOps({ variant: 'relaxed-simd', threads: 2 });
    pairs = await createWasmOps({ variant: 'simd128', threads: 1 });
  });
  afterAll(() => {
    for (const o of [r4, r4x2, pairs]) o?.destroy();
  });

  for (const qt of ROWS4_TYPES) {
    it(`${qt.name}: rows 1, 2, 3, 5, 6, 7, 8, 36, 37 × tokens 1…9, 11, 17 (8-, 4- and 1-token tiles)`, async () => {
      const k = rowLength(qt, qt.blockElements === 32 ? 3 : 2);
      for (const nRows of [1, 2, 3, 5, 6, 7, 8, 36, 37]) {
        const bytes = quantize(qt.id, randomF32(k * nRows, qt.id * 100 + nRows));
        for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 17]) {
          const x = randomF32(n * k, n * 31 + nRows, 3);
          const want = await matmul(pairs, qt.id, bytes, k, nRows, x, n);
          const got = await matmul(r4, qt.id, bytes, k, nRows, x, n);
          expectClose(got, want, `${qt.name} rows ${nRows} n ${n}`, qt.id, bytes, x, k);
        }
      }
    });

    it.runIf(qt.id === GgmlType.Q4_K || qt.id === GgmlType.Q5_K || qt.id === GgmlType.Q6_K)(
      `${qt.name}: the 8- and 4-token tiles are bit-identical to the one-token tile (rows 6, 8, 36, 37 × tokens 4, 8, 13; whole groups take decode's own loop)`,
      async () => {
        const k = rowLength(qt, 2);
        for (const nRows of [6, 8, 36, 37]) {
          const bytes = quantize(qt.id, randomF32(k * nRows, qt.id * 7 + nRows));
          for (const n of [4, 8, 13]) {
            const x = randomF32(n * k, n * 5 + nRows, 3);
            const got = await matmul(r4, qt.id, bytes, k, nRows, x, n);
            for (let t = 0; t < n; t++) {
              const one = await matmul(r4, qt.id, bytes, k, nRows, x.slice(t * k, (t + 1) * k), 1);
              expect(Array.from(got.subarray(t * nRows, (t + 1) * nRows)), `rows ${nRows} n ${n} token ${t}`).toEqual(
                Array.from(one),
              );
            }
          }
        }
      },
    );

    it.runIf(qt.blockElements === 256)(
      `${qt.name}: subnormal f16 super-block scales (weights ~1e-3, as small real tensors quantize) — rows 5, 37 × tokens 1, 5, 8`,
      async () => {
        const k = rowLength(qt, 3);
        for (const nRows of [5, 37]) {
          const bytes = quantize(qt.id, randomF32(k * nRows, qt.id * 11 + nRows, 1e-3));
          // The quantized d (Q4_K/Q5_K: d at 0 and dmin at 2; Q6_K: d at 208) must include subnormal halves.
          const dAt = qt.id === GgmlType.Q6_K ? 208 : 0;
          let subnormal = 0;
          for (let b = 0; b < bytes.length; b += qt.blockBytes) {
            const h = bytes[b + dAt]! | (bytes[b + dAt + 1]! << 8);
            if ((h & 0x7c00) === 0 && (h & 0x3ff) !== 0) subnormal++;
          }
          expect(subnormal, 'subnormal super-block scales').toBeGreaterThan(0);
          for (const n of [1, 5, 8]) {
            const x = randomF32(n * k, n * 13 + nRows, 3);
            const want = await matmul(pairs, qt.id, bytes, k, nRows, x, n);
            const got = await matmul(r4, qt.id, bytes, k, nRows, x, n);
            expect(want.every((v) => v !== 0 && Number.isFinite(v))).toBe(true);
            expectClose(got, want, `${qt.name} rows ${nRows} n ${n}`, qt.id, bytes, x, k);
          }
        }
      },
    );

    it(`${qt.name}: two threads whose row chunks cut 4-row groups (131 rows × 1024)`, async () => {
      const [k, nRows] = [1024, 131]; // chunks at rows 32, 65, 98: two of them inside a group
      const bytes = quantize(qt.id, randomF32(k * nRows, qt.id));
      for (const n of [1, 4, 13]) {
        const x = randomF32(n * k, n, 2);
        const want = await matmul(pairs, qt.id, bytes, k, nRows, x, n);
        expectClose(
          await matmul(r4x2, qt.id, bytes, k, nRows, x, n),
          want,
          `${qt.name} ×2 threads n ${n}`,
          qt.id,
          bytes,
          x,
          k,
        );
      }
    });

    it(`${qt.name}: an embedding lookup of a table stored in 4-row groups gives its GGUF rows`, async () => {
      const [k, nRows] = [rowLength(qt, qt.blockElements === 32 ? 2 : 1), 7];
      const bytes = quantize(qt.id, randomF32(k * nRows, 5));
      const want = new Float32Array(k * nRows);
      qt.dequantizeRow(bytes, want, k * nRows);
      const table = await r4.uploadWeight({ name: 'emb', type: qt.id, shape: [k, nRows] }, bytes);
      const out = r4.createActivation('e', nRows, k);
      r4.beginStep({ tokens: Int32Array.of(6, 0, 5, 1, 4, 2, 3), startPos: 0, slot: 0 });
      r4.embed(out, table, nRows);
      r4.endStep();
      const got = await r4.read(out, nRows);
      [6, 0, 5, 1, 4, 2, 3].forEach((id, i) => {
        expect(Array.from(got.subarray(i * k, (i + 1) * k)), `row ${id}`).toEqual(
          Array.from(want.subarray(id * k, (id + 1) * k)),
        );
      });
    });

    it(`${qt.name}: a streamed upload in 4-row pieces equals a whole upload; a piece inside a group is refused`, async () => {
      const [k, nRows, n] = [rowLength(qt, qt.blockElements === 32 ? 2 : 1), 10, 5];
      const bytes = quantize(qt.id, randomF32(k * nRows, 9));
      const rowBytes = (k / qt.blockElements) * qt.blockBytes;
      const info = { name: 'streamed', type: qt.id, shape: [k, nRows] };
      const stream = r4.beginWeight!(info);
      for (let r = 0; r < nRows; r += 4) {
        const len = Math.min(4, nRows - r) * rowBytes;
        stream.target(r * rowBytes, len).set(bytes.subarray(r * rowBytes, r * rowBytes + len));
        stream.commit(r * rowBytes, len);
      }
      const w = await stream.finish();
      const x = randomF32(n * k, 3);
      const xa = r4.createActivation('x', n, k);
      const out = r4.createActivation('out', n, nRows);
      const table = await r4.uploadWeight(
        { name: 'x', type: GgmlType.F32, shape: [k, n] },
        new Uint8Array(x.buffer.slice(0)),
      );
      r4.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
      r4.embed(xa, table, n);
      r4.matmul(out, xa, w, n);
      r4.endStep();
      expectClose(
        await r4.read(out, n),
        await matmul(pairs, qt.id, bytes, k, nRows, x, n),
        `${qt.name} streamed`,
        qt.id,
        bytes,
        x,
        k,
      );
      const bad = r4.beginWeight!(info);
      let error: unknown;
      try {
        bad.target(2 * rowBytes, 4 * rowBytes);
      } catch (e) {
        error = e;
      }
      expect(isLlmError(error) && error.code === 'invalid-request', String(error)).toBe(true);
      bad.cancel();
    });

    it(`${qt.name}: the streamed interleave finds non-finite scales as the loader's scan does (first in GGUF order)`, async () => {
      const [k, nRows] = [rowLength(qt, qt.blockElements === 32 ? 3 : 2), 10];
      const rowBytes = (k / qt.blockElements) * qt.blockBytes;
      const blocksPerRow = k / qt.blockElements;
      const clean = quantize(qt.id, randomF32(k * nRows, 17));
      const info = { name: 'checked', type: qt.id, shape: [k, nRows] };
      // [row, block, scale, NaN or Inf]: planted alone, then together (the GGUF-order first wins, not the group's).
      const spots: [number, number, number, number][] = qt.f16Scales.flatMap((at, s) => [
        [9, blocksPerRow - 1, at, 0x7e00], // the padded last group, last block
        [5, 1, at, 0xfc00], // row 1 of group 1
        [4 + s, 2, at, 0x7c00], // row 0 or 1 of group 1, a later block
      ]);
      const runs = [...spots.map((spot) => [spot]), spots];
      for (const planted of [[], ...runs]) {
        const bytes = clean.slice();
        for (const [r, b, at, bits] of planted) {
          const i = r * rowBytes + b * qt.blockBytes + at;
          [bytes[i], bytes[i + 1]] = [bits & 0xff, bits >> 8];
        }
        const stream = r4.beginWeight!(info);
        expect(stream.commitChecked, qt.name).toBeTypeOf('function');
        const found: number[] = [];
        for (const [r, rows] of [
          [0, 4],
          [4, 6],
        ]) {
          const piece = bytes.subarray(r * rowBytes, (r + rows) * rowBytes);
          stream.target(r * rowBytes, piece.byteLength).set(piece);
          found.push(stream.commitChecked!(r * rowBytes, piece.byteLength));
          expect(found.at(-1), `${qt.name} ${JSON.stringify(planted)}`).toBe(firstNonFinite(qt.id, piece));
        }
        if (planted.length > 0) expect(found[1], qt.name).toBeGreaterThanOrEqual(0);
        await stream.finish();
      }
    });
  }
});
