/**
 * MXFP4 weights (ggml block_mxfp4, 17 bytes: u8 e (E8M0); u8 qs[16], byte j = element j low nibble, j + 16 high)
 * · Q8 activation rows (wasm/assembly/q8-activations.ts). Per block d_w · d_x · Σ kv[q]·qx with kv = ggml's
 * kvalues_mxfp4 (E2M1 doubled, −12 … 12) and d_w = 2^(e − 128) (ggml_e8m0_to_fp32_half).
 * Rows are stored in the row-pair layout (src/backend/wasm/row-pairs.ts: rows 2p, 2p + 1 alternate block by block,
 * one memory stream), so the SIMD builds take a stored pair at a time: each activation load serves both rows. They
 * look the nibbles up with one i8x16.swizzle over a constant vector holding kv + 12 (0 … 24, unsigned, so the relaxed
 * build's i8·i7 dot takes it), and take the +12 back out of each block's integer dot as 12·Σqx (the activation
 * row's isum16), so every block's dot is the exact integer Σ kv·qx before its one conversion to f32. The scalar build computes kv from the nibble (the module has no
 * data segment).
 */

import { q8RowBytes } from './q8-activations';
import { dot2U4I8I16, fmaF32x4, hiNibbles, hsumI32x4 } from './simd-dot';

const BLOCK_BYTES: usize = 17;

/** ggml_e8m0_to_fp32_half(e): f32 bits (e − 1) << 23, or the subnormal 0x00200000 << e for e < 2. */
// @ts-ignore: decorator
@inline function e8m0Half(e: u32): f32 {
  return reinterpret<f32>(e < 2 ? <u32>0x00200000 << e : (e - 1) << 23);
}

/** e8m0Half of four E8M0 bytes held in the i32 lanes of `e` (subnormal lanes: (e + 1) << 21 for e < 2; signed compare, one x86 instruction, as e ≤ 255). */
// @ts-ignore: decorator
@inline function e8m0HalfX4(e: v128): v128 {
  const one = i32x4.splat(1);
  return v128.bitselect(i32x4.shl(i32x4.add(e, one), 21), i32x4.shl(i32x4.sub(e, one), 23), i32x4.lt_s(e, i32x4.splat(2)));
}

/** kvalues_mxfp4[q] for a nibble q (0, 1, 2, 3, 4, 6, 8, 12, then the same negated). */
// @ts-ignore: decorator
@inline function kvalue(q: i32): i32 {
  const m = q & 7;
  const v = m < 4 ? m : m == 7 ? 12 : (m - 2) << 1;
  return q & 8 ? -v : v;
}

/** kvalues_mxfp4 + 12 as a swizzle table (nibble → 0 … 24). */
// @ts-ignore: decorator
@inline function kvTable(): v128 {
  return i8x16(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
}

/**
 * i16x8 lanes summing to Σ (kv[q] + 12)·qx of the block at `wb` against activations x0 | x1: each lane ≤ 4·24·127
 * = 12192, so two such vectors still add in i16 (pairSum4).
 */
// @ts-ignore: decorator
@inline function blockDot(wb: usize, x0: v128, x1: v128, table: v128, mask: v128): v128 {
  const q = v128.load(wb, 1);
  return dot2U4I8I16(lookup(table, v128.and(q, mask)), x0, lookup(table, hiNibbles(q, mask)), x1);
}

/**
 * table[i] per lane for indices 0 … 15: the relaxed swizzle is one x86 pshufb (defined for indices < 16); the plain
 * one adds a saturating add first (its out-of-range indices must read 0).
 */
// @ts-ignore: decorator
@inline function lookup(table: v128, idx: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    return i8x16.relaxed_swizzle(table, idx);
  } else {
    return i8x16.swizzle(table, idx);
  }
}

/**
 * [Σ a, Σ b, Σ c, Σ d] as i32x4 for four blockDot results: one interleave-add in i16 (≤ 24384), then widened before
 * the second (simd-dot.ts hsum4I16 adds both in i16, which these larger lanes would overflow).
 */
// @ts-ignore: decorator
@inline function pairSum4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i32x4.extadd_pairwise_i16x8_s(i16x8.add(i32x4.shuffle(a, b, 0, 4, 1, 5), i32x4.shuffle(a, b, 2, 6, 3, 7)));
  const cd = i32x4.extadd_pairwise_i16x8_s(i16x8.add(i32x4.shuffle(c, d, 0, 4, 1, 5), i32x4.shuffle(c, d, 2, 6, 3, 7)));
  return i32x4.add(i64x2.shuffle(ab, cd, 0, 2), i64x2.shuffle(ab, cd, 1, 3)); // ab = [a, b, a, b], cd likewise
}

/**
 * 12·[S_b, S_b+1, S_b, S_b+1] for S_b = Σqx of activation block b: the +12 offset's share of pairSum4's lanes, from
 * the four isum16 half-block sums of blocks b, b + 1 at `hs`.
 */
// @ts-ignore: decorator
@inline function offsetPair(hs: usize): v128 {
  const h = v128.load(hs);
  return i32x4.mul(i32x4.add(i32x4.shuffle(h, h, 0, 2, 0, 2), i32x4.shuffle(h, h, 1, 3, 1, 3)), i32x4.splat(12));
}

/** 12·S_b of activation block b (isum16 at `hs`, see offsetPair). */
// @ts-ignore: decorator
@inline function offsetBlock(hs: usize, b: i32): i32 {
  const at = hs + (<usize>b << 3);
  return 12 * (load<i32>(at) + load<i32>(at, 4));
}

/**
 * The stored row pair at `w` (rows A, B of nb blocks, interleaved A₀ B₀ A₁ B₁ …) · one Q8 activation row `xq`
 * (k elements) → out[0] (A) and out[oStep] (B). Two blocks of both rows per step, one vector [A_b, A_b+1, B_b,
 * B_b+1] throughout: one transpose-add, one conversion, one scale vector and two fused multiply-adds per step.
 */
// @ts-ignore: decorator
@inline function rowPairMxfp4(w: usize, xq: usize, nb: i32, k: i32, out: usize, oStep: usize): void {
  const table = kvTable();
  const mask = i8x16.splat(0x0f);
  const xd = xq + <usize>k; // f32 [nb] activation scales, f32 [nb] sums s, then i32 [2·nb] isum16
  const hs = xd + (<usize>nb << 3);
  const zero = i32x4.splat(0);
  let acc = f32x4.splat(0); // lanes 0, 1: row A; 2, 3: row B
  let b = 0;
  for (; b + 2 <= nb; b += 2) {
    const pa = w + <usize>b * (2 * BLOCK_BYTES); // A_b, then B_b, A_b+1, B_b+1
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16), x2 = v128.load(xb, 32), x3 = v128.load(xb, 48);
    const p = i32x4.sub(pairSum4(
      blockDot(pa, x0, x1, table, mask), blockDot(pa + 2 * BLOCK_BYTES, x2, x3, table, mask),
      blockDot(pa + BLOCK_BYTES, x0, x1, table, mask), blockDot(pa + 3 * BLOCK_BYTES, x2, x3, table, mask),
    ), offsetPair(hs + (<usize>b << 3)));
    let e = v128.load8_lane(pa, zero, 0);
    e = v128.load8_lane(pa + 2 * BLOCK_BYTES, e, 4);
    e = v128.load8_lane(pa + BLOCK_BYTES, e, 8);
    e = v128.load8_lane(pa + 3 * BLOCK_BYTES, e, 12);
    const d = e8m0HalfX4(e);
    const so = <usize>b << 2;
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(p), f32x4.mul(d, v128.load64_splat(xd + so)));
  }
  let ra = f32x4.extract_lane(acc, 0) + f32x4.extract_lane(acc, 1);
  let rb = f32x4.extract_lane(acc, 2) + f32x4.extract_lane(acc, 3);
  if (b < nb) {
    // Odd block count: the last block of both rows.
    const pa = w + <usize>b * (2 * BLOCK_BYTES);
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const p = pairSum4(blockDot(pa, x0, x1, table, mask), zero, blockDot(pa + BLOCK_BYTES, x0, x1, table, mask), zero);
    const dx = load<f32>(xd + (<usize>b << 2));
    const off = offsetBlock(hs, b);
    const da = e8m0Half(<u32>load<u8>(pa)), db = e8m0Half(<u32>load<u8>(pa + BLOCK_BYTES));
    ra += <f32>(i32x4.extract_lane(p, 0) - off) * (da * dx);
    rb += <f32>(i32x4.extract_lane(p, 2) - off) * (db * dx);
  }
  store<f32>(out, ra);
  store<f32>(out + oStep, rb);
}

/** kv + 12 of the block at `wb`: its low-nibble (half 0) or high-nibble (half 1) elements. */
// @ts-ignore: decorator
@inline function unpack(wb: usize, half: i32, table: v128, mask: v128): v128 {
  const q = v128.load(wb, 1);
  return lookup(table, half == 0 ? v128.and(q, mask) : hiNibbles(q, mask));
}

/**
 * One token's step of tile4PairMxfp4: the unpacked blocks [A_b, A_b+1, B_b, B_b+1] against that token's activation
 * blocks b, b + 1 at `xb` (their isum16 at `hs`); returns acc + (Σ kv·qx)·d·d_x lane-wise (d = the blocks' scales).
 */
// @ts-ignore: decorator
@inline function stepToken(
  acc: v128, la0: v128, ha0: v128, la1: v128, ha1: v128, lb0: v128, hb0: v128, lb1: v128, hb1: v128,
  xb: usize, xd: usize, hs: usize, d: v128,
): v128 {
  const x0 = v128.load(xb), x1 = v128.load(xb, 16), x2 = v128.load(xb, 32), x3 = v128.load(xb, 48);
  const p = pairSum4(dot2U4I8I16(la0, x0, ha0, x1), dot2U4I8I16(la1, x2, ha1, x3), dot2U4I8I16(lb0, x0, hb0, x1), dot2U4I8I16(lb1, x2, hb1, x3));
  return fmaF32x4(acc, f32x4.convert_i32x4_s(i32x4.sub(p, offsetPair(hs))), f32x4.mul(d, v128.load64_splat(xd)));
}

/**
 * Prefill tile: the stored row pair at `w` (rows A, B) · four Q8 activation rows (xq, xq + xrb, …) → out[t·osb]
 * (row A) and out[t·osb + 4] (row B) for t < 4. Each step unpacks two blocks of both rows once and runs them against
 * every token as rowPairMxfp4 does against one.
 */
// @ts-ignore: decorator
@inline function tile4PairMxfp4(w: usize, xq: usize, xrb: usize, nb: i32, k: i32, out: usize, osb: usize): void {
  const table = kvTable();
  const mask = i8x16.splat(0x0f);
  const zero = i32x4.splat(0);
  const xd = xq + <usize>k; // token t's block scales at xd + t·xrb, its isum16 2·nb·4 bytes after them
  const hs = xd + (<usize>nb << 3);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b = 0;
  for (; b + 2 <= nb; b += 2) {
    const pa = w + <usize>b * (2 * BLOCK_BYTES); // A_b, B_b, A_b+1, B_b+1
    const la0 = unpack(pa, 0, table, mask), ha0 = unpack(pa, 1, table, mask);
    const lb0 = unpack(pa + BLOCK_BYTES, 0, table, mask), hb0 = unpack(pa + BLOCK_BYTES, 1, table, mask);
    const la1 = unpack(pa + 2 * BLOCK_BYTES, 0, table, mask), ha1 = unpack(pa + 2 * BLOCK_BYTES, 1, table, mask);
    const lb1 = unpack(pa + 3 * BLOCK_BYTES, 0, table, mask), hb1 = unpack(pa + 3 * BLOCK_BYTES, 1, table, mask);
    let e = v128.load8_lane(pa, zero, 0);
    e = v128.load8_lane(pa + 2 * BLOCK_BYTES, e, 4);
    e = v128.load8_lane(pa + BLOCK_BYTES, e, 8);
    e = v128.load8_lane(pa + 3 * BLOCK_BYTES, e, 12);
    const d = e8m0HalfX4(e);
    const xo = <usize>b << 5;
    const so = <usize>b << 2;
    const ho = <usize>b << 3;
    a0 = stepToken(a0, la0, ha0, la1, ha1, lb0, hb0, lb1, hb1, xq + xo, xd + so, hs + ho, d);
    a1 = stepToken(a1, la0, ha0, la1, ha1, lb0, hb0, lb1, hb1, xq + xrb + xo, xd + xrb + so, hs + xrb + ho, d);
    a2 = stepToken(a2, la0, ha0, la1, ha1, lb0, hb0, lb1, hb1, xq + 2 * xrb + xo, xd + 2 * xrb + so, hs + 2 * xrb + ho, d);
    a3 = stepToken(a3, la0, ha0, la1, ha1, lb0, hb0, lb1, hb1, xq + 3 * xrb + xo, xd + 3 * xrb + so, hs + 3 * xrb + ho, d);
  }
  let r0a = f32x4.extract_lane(a0, 0) + f32x4.extract_lane(a0, 1), r0b = f32x4.extract_lane(a0, 2) + f32x4.extract_lane(a0, 3);
  let r1a = f32x4.extract_lane(a1, 0) + f32x4.extract_lane(a1, 1), r1b = f32x4.extract_lane(a1, 2) + f32x4.extract_lane(a1, 3);
  let r2a = f32x4.extract_lane(a2, 0) + f32x4.extract_lane(a2, 1), r2b = f32x4.extract_lane(a2, 2) + f32x4.extract_lane(a2, 3);
  let r3a = f32x4.extract_lane(a3, 0) + f32x4.extract_lane(a3, 1), r3b = f32x4.extract_lane(a3, 2) + f32x4.extract_lane(a3, 3);
  if (b < nb) {
    // Odd block count: the last block of both rows, token by token.
    const pa = w + <usize>b * (2 * BLOCK_BYTES);
    const pb = pa + BLOCK_BYTES;
    const da = e8m0Half(<u32>load<u8>(pa)), db = e8m0Half(<u32>load<u8>(pb));
    for (let t = 0; t < 4; t++) {
      const xb = xq + <usize>t * xrb + (<usize>b << 5);
      const x0 = v128.load(xb), x1 = v128.load(xb, 16);
      const p = pairSum4(blockDot(pa, x0, x1, table, mask), zero, blockDot(pb, x0, x1, table, mask), zero);
      const dx = load<f32>(xd + <usize>t * xrb + (<usize>b << 2));
      const off = offsetBlock(hs + <usize>t * xrb, b);
      const ra = <f32>(i32x4.extract_lane(p, 0) - off) * (da * dx);
      const rb = <f32>(i32x4.extract_lane(p, 2) - off) * (db * dx);
      if (t == 0) { r0a += ra; r0b += rb; } else if (t == 1) { r1a += ra; r1b += rb; } else if (t == 2) { r2a += ra; r2b += rb; } else { r3a += ra; r3b += rb; }
    }
  }
  store<f32>(out, r0a);
  store<f32>(out, r0b, 4);
  store<f32>(out + osb, r1a);
  store<f32>(out + osb, r1b, 4);
  store<f32>(out + 2 * osb, r2a);
  store<f32>(out + 2 * osb, r2b, 4);
  store<f32>(out + 3 * osb, r3a);
  store<f32>(out + 3 * osb, r3b, 4);
}

/** One weight row (blocks `stride` bytes apart) · one Q8 activation row of k elements (nb blocks). */
// @ts-ignore: decorator
@inline function rowDotMxfp4(wr: usize, xq: usize, nb: i32, k: i32, stride: usize): f32 {
  const xd = xq + <usize>k; // the blocks' f32 d follow the k quants, then their sums s and isum16
  if (ASC_FEATURE_SIMD) {
    const table = kvTable();
    const mask = i8x16.splat(0x0f);
    const hs = xd + (<usize>nb << 3);
    let acc: f32 = 0;
    for (let b = 0; b < nb; b++) {
      const w0 = wr + <usize>b * stride;
      const xb = xq + (<usize>b << 5);
      const p = hsumI32x4(i32x4.extadd_pairwise_i16x8_s(blockDot(w0, v128.load(xb), v128.load(xb, 16), table, mask)));
      acc += <f32>(p - offsetBlock(hs, b)) * (e8m0Half(<u32>load<u8>(w0)) * load<f32>(xd + (<usize>b << 2)));
    }
    return acc;
  } else {
    let acc: f32 = 0;
    for (let b = 0; b < nb; b++) {
      const w0 = wr + <usize>b * stride;
      const x0 = xq + (<usize>b << 5);
      let sumi: i32 = 0;
      for (let j = 0; j < 16; j++) {
        const q = <i32>load<u8>(w0 + 1 + <usize>j);
        sumi += kvalue(q & 15) * <i32>load<i8>(x0 + <usize>j) + kvalue(q >> 4) * <i32>load<i8>(x0 + 16 + <usize>j);
      }
      acc += <f32>sumi * (e8m0Half(<u32>load<u8>(w0)) * load<f32>(xd + (<usize>b << 2)));
    }
    return acc;
  }
}

/**
 * MXFP4 weights (row-pair layout) · Q8 activations: rows r0 … r1−1 for n tokens (signature as gemv_q4_0). The SIMD
 * builds take a stored pair against four tokens at a time (prefill), then token by token; a thread chunk (or an
 * expert's rows) may start or end mid-pair: such a row takes the one-row dot.
 */
export function gemv_mxfp4(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const nb = k >> 5;
  const rowBytes = <usize>nb * BLOCK_BYTES;
  const xrb = q8RowBytes(k);
  for (let r = r0; r < r1; ) {
    const wr = w + <usize>(r >> 1) * (rowBytes << 1) + <usize>(r & 1) * BLOCK_BYTES;
    if (ASC_FEATURE_SIMD && (r & 1) == 0 && r + 2 <= r1) {
      const osb = <usize>outStride << 2;
      let t = 0;
      for (; t + 4 <= n; t += 4) tile4PairMxfp4(wr, x + <usize>t * xrb, xrb, nb, k, out + <usize>t * osb + (<usize>r << 2), osb);
      for (; t < n; t++) {
        rowPairMxfp4(wr, x + <usize>t * xrb, nb, k, out + ((<usize>t * <usize>outStride + <usize>r) << 2), 4);
      }
      r += 2;
    } else {
      for (let t = 0; t < n; t++) {
        const o = out + ((<usize>t * <usize>outStride + <usize>r) << 2);
        store<f32>(o, rowDotMxfp4(wr, x + <usize>t * xrb, nb, k, 2 * BLOCK_BYTES));
      }
      r++;
    }
  }
}
