/**
 * f16 KV rows widened to f32 for the grouped attention passes (attention.ts): a block of one KV head's K (or V) rows
 * is widened once into a scratch block that the f32 register tiles (attention-group.ts) then read for every head of
 * the GQA group — half the bytes streamed from memory of an f32 cache, and the widening shared by the group's heads
 * (Qwen2.5-0.5B: 7) instead of done again per head and position.
 *   src   f16 rows b … e of one KV head at base + t·stride (headDim values each)
 *   dst   f32 [e − b + 1, headDim] back to back
 * The values are exactly loadF16's (so the f16 path computes what the f32 kernel computes on the f16 values).
 */
import { loadF16 } from './simd-dot';

/** 2^112: rescales an f16 exponent/mantissa shifted into f32 position (exact for normals and subnormals). */
const F16_EXP_REBIAS: f32 = 5.192296858534828e33;

/**
 * Four f16 (lanes 0…3 of `h` as i16, or 4…7 with `high`) → f32x4 in four instructions: the halves interleaved with
 * zeros put each f16 in the top 16 bits of its lane (sign at bit 31, exponent at 30…26, mantissa at 25…16); an
 * arithmetic shift by 3 moves exponent and mantissa to f32's positions (27…23, 22…13) with the sign still at 31 and
 * copies of it at 30…28, which the mask clears; × 2^112 rebias the exponent (the sign rides along: exact).
 * Same values as f16ToF32 for every finite f16 (subnormals included).
 */
// @ts-ignore: decorator
@inline function widen4(h: v128, high: bool): v128 {
  const z = i32x4.splat(0);
  const u = high
    ? i8x16.shuffle(z, h, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31)
    : i8x16.shuffle(z, h, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
  return f32x4.mul(v128.and(i32x4.shr_s(u, 3), i32x4.splat(<i32>0x8fffffff)), f32x4.splat(F16_EXP_REBIAS));
}

/**
 * Rows read ahead: wasm has no prefetch and the hardware prefetcher does not follow one KV head's strided walk (rows of
 * all KV heads interleaved), so the widening touches each row's cache lines READ_AHEAD positions early (one u64 load
 * per 64-byte line, OR-ed and stored to `dst` only if the block is empty, so the loads stay). Qwen2.5-0.5B's geometry
 * at 4,096 positions: 28.6 → ~15–17 ms of CPU per token (32, 64 and 128 rows ahead alike within the noise).
 */
const READ_AHEAD = 32;

/** See the file header; rows up to `last` (the query's position) are read READ_AHEAD positions ahead. */
export function widenF16Rows(dst: usize, base: usize, stride: usize, b: i32, e: i32, headDim: i32, last: i32): void {
  const rowBytes = <usize>headDim << 2;
  const srcBytes = <usize>headDim << 1;
  let touched: u64 = 0;
  for (let t = b; t <= e; t++) {
    const src = base + <usize>t * stride;
    if (t + READ_AHEAD <= last) {
      const ra = src + <usize>READ_AHEAD * stride;
      for (let l: usize = 0; l < srcBytes; l += 64) touched |= load<u64>(ra + l);
    }
    const d = dst + <usize>(t - b) * rowBytes;
    let i = 0;
    if (ASC_FEATURE_SIMD) {
      for (; i + 8 <= headDim; i += 8) {
        const h = v128.load(src + (<usize>i << 1));
        const o = d + (<usize>i << 2);
        v128.store(o, widen4(h, false));
        v128.store(o, widen4(h, true), 16);
      }
      if (i + 4 <= headDim) {
        v128.store(d + (<usize>i << 2), widen4(v128.load64_zero(src + (<usize>i << 1)), false));
        i += 4;
      }
    }
    for (; i < headDim; i++) store<f32>(d + (<usize>i << 2), loadF16(src + (<usize>i << 1)));
  }
  if (b > e) store<u64>(dst, touched);
}

/**
 * Widens f16 rows r0 ≤ r < r1 of `cols` values each (f16 [rows, cols] at `x`) into f32 [rows, cols] at `out`, in the
 * matvec signature so the host's thread pool can split the rows (`_p`, `_n`, `_s` unused). The host runs it over a
 * layer's f16 K and V before an attention call whose f32 copy fits in cache (src/backend/wasm/attention-widen.ts):
 * one sequential pass instead of the grouped path's strided blocks, and once for all the rows of a prefill batch
 * instead of once per row. Values exactly loadF16's.
 */
export function widen_f16_rows(_p: usize, x: usize, out: usize, cols: i32, r0: i32, r1: i32, _n: i32, _s: i32): void {
  const end = <usize>r1 * <usize>cols;
  let i = <usize>r0 * <usize>cols;
  if (ASC_FEATURE_SIMD) {
    for (; i + 8 <= end; i += 8) {
      const h = v128.load(x + (i << 1));
      const o = out + (i << 2);
      v128.store(o, widen4(h, false));
      v128.store(o, widen4(h, true), 16);
    }
  }
  for (; i < end; i++) store<f32>(out + (i << 2), loadF16(x + (i << 1)));
}
