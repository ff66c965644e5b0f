/**
 * Fused matvecs for ggml's 32-element block types — Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 — against Q8 activations
 * (q8-activations.ts). Blocks are ggml-common.h's (`block_q4_0` …); Q4_0, Q5_0 and Q8_0 rows are stored in row pairs,
 * their blocks interleaved (`rowAt`), Q4_1 and Q5_1 as GGUF rows.
 * Quants are kept unsigned (0…15 / 0…31) so the relaxed build can use `i16x8.relaxed_dot_i8x16_i7x16_s`; the
 * −8 / −16 offsets and the Q4_1/Q5_1 minimums are folded in through the activation block sums `s = d·Σq`.
 * Every kernel: out[t, r] = dot(W[r], x[t]) for rows r0 ≤ r < r1 and tokens t < n (out row stride `outStride`);
 * with several tokens (prefill) the SIMD builds take them four at a time so each weight block is unpacked once; the
 * remaining single tokens (decode) of Q4_0, Q5_0 (SIMD builds) and Q8_0 (relaxed build) take a stored row pair at a
 * time (gemv-row-pairs.ts), a thread chunk's unpaired first or last row one row at a time.
 */
import { q8RowBytes } from './q8-activations';
import { rowPairQ45, rowPairQ8_0, rowQ8_0, tile4PairQ45 } from './gemv-row-pairs';
import { dot2U7I8, dotI8I8, f16x4ToF32x4, fmaF32x4, hiNibbles, hsumF32x4, loadF16, q5HighBits } from './simd-dot';

/**
 * Start of row r: in the row-pair layout (Q4_0, Q5_0 and Q8_0, `paired`; see src/backend/wasm/row-pairs.ts) rows
 * 2p and 2p + 1 alternate block by block, so a row's blocks are 2·blockBytes apart; otherwise GGUF rows.
 */
// @ts-ignore: decorator
@inline function rowAt(w: usize, r: i32, rowBytes: usize, blockBytes: usize, paired: bool): usize {
  return paired ? w + <usize>(r >> 1) * (rowBytes << 1) + <usize>(r & 1) * blockBytes : w + <usize>r * rowBytes;
}

/** Whether rows r and r + 1 are one stored pair, both below r1 (a thread's chunk may start or end mid-pair). */
// @ts-ignore: decorator
@inline function isPairStart(r: i32, r1: i32): bool {
  return (r & 1) == 0 && r + 2 <= r1;
}

// @ts-ignore: decorator
@inline function outPtr(out: usize, t: i32, outStride: i32, r: i32): usize {
  return out + ((<usize>t * <usize>outStride + <usize>r) << 2);
}

/**
 * Σ over blocks of d_w · d_x · Σ q·qx for 4- or 5-bit blocks: returns the scaled integer part; `kind` picks the layout
 * (0: Q4_0 18 B, 1: Q4_1 20 B, 2: Q5_0 22 B, 3: Q5_1 24 B). The caller adds the offset/min term.
 */
// @ts-ignore: decorator
@inline function rowDotQ45(wr: usize, xq: usize, nb: i32, k: i32, kind: i32, stride: usize): f32 {
  const qsOff: usize = kind == 0 ? 2 : kind == 1 ? 4 : kind == 2 ? 6 : 8;
  const xd = xq + <usize>k;
  const xs = xd + (<usize>nb << 2);
  let corr: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    const mask = i8x16.splat(0x0f);
    let acc0 = f32x4.splat(0);
    let acc1 = f32x4.splat(0);
    let b = 0;
    if (kind == 0) {
      // Q4_0: four blocks per step, the per-block scalar work done as one f32x4 (lane j = block b + j).
      let cv = f32x4.splat(0);
      for (; b + 4 <= nb; b += 4) {
        const w0 = wr + <usize>b * stride;
        const x0 = xq + (<usize>b << 5);
        const v0 = v128.load(w0, 2);
        const v1 = v128.load(w0 + stride, 2);
        const v2 = v128.load(w0 + 2 * stride, 2);
        const v3 = v128.load(w0 + 3 * stride, 2);
        const p0 = dot2U7I8(v128.and(v0, mask), v128.load(x0), hiNibbles(v0, mask), v128.load(x0, 16));
        const p1 = dot2U7I8(v128.and(v1, mask), v128.load(x0, 32), hiNibbles(v1, mask), v128.load(x0, 48));
        const p2 = dot2U7I8(v128.and(v2, mask), v128.load(x0, 64), hiNibbles(v2, mask), v128.load(x0, 80));
        const p3 = dot2U7I8(v128.and(v3, mask), v128.load(x0, 96), hiNibbles(v3, mask), v128.load(x0, 112));
        let h = v128.load16_lane(w0, i32x4.splat(0), 0);
        h = v128.load16_lane(w0 + stride, h, 2);
        h = v128.load16_lane(w0 + 2 * stride, h, 4);
        h = v128.load16_lane(w0 + 3 * stride, h, 6);
        const d = f16x4ToF32x4(h);
        const so = <usize>b << 2;
        const dd = f32x4.mul(d, v128.load(xd + so));
        acc0 = fmaF32x4(acc0, f32x4.convert_i32x4_s(p0), i32x4.shuffle(dd, dd, 0, 0, 0, 0));
        acc1 = fmaF32x4(acc1, f32x4.convert_i32x4_s(p1), i32x4.shuffle(dd, dd, 1, 1, 1, 1));
        acc0 = fmaF32x4(acc0, f32x4.convert_i32x4_s(p2), i32x4.shuffle(dd, dd, 2, 2, 2, 2));
        acc1 = fmaF32x4(acc1, f32x4.convert_i32x4_s(p3), i32x4.shuffle(dd, dd, 3, 3, 3, 3));
        cv = fmaF32x4(cv, d, v128.load(xs + so));
      }
      corr = -8 * hsumF32x4(cv);
    }
    for (; b + 2 <= nb; b += 2) {
      const w0 = wr + <usize>b * stride;
      const w1 = w0 + stride;
      const x0 = xq + (<usize>b << 5);
      const v0 = v128.load(w0 + qsOff);
      const v1 = v128.load(w1 + qsOff);
      let lo0 = v128.and(v0, mask), hi0 = hiNibbles(v0, mask);
      let lo1 = v128.and(v1, mask), hi1 = hiNibbles(v1, mask);
      if (kind >= 2) {
        const qh0 = load<u32>(w0 + <usize>(kind == 2 ? 2 : 4));
        const qh1 = load<u32>(w1 + <usize>(kind == 2 ? 2 : 4));
        lo0 = v128.or(lo0, q5HighBits(qh0, 0)); hi0 = v128.or(hi0, q5HighBits(qh0, 1));
        lo1 = v128.or(lo1, q5HighBits(qh1, 0)); hi1 = v128.or(hi1, q5HighBits(qh1, 1));
      }
      const p0 = dot2U7I8(lo0, v128.load(x0), hi0, v128.load(x0, 16));
      const p1 = dot2U7I8(lo1, v128.load(x0, 32), hi1, v128.load(x0, 48));
      const d0 = loadF16(w0);
      const d1 = loadF16(w1);
      acc0 = fmaF32x4(acc0, f32x4.convert_i32x4_s(p0), f32x4.splat(d0 * load<f32>(xd + (<usize>b << 2))));
      acc1 = fmaF32x4(acc1, f32x4.convert_i32x4_s(p1), f32x4.splat(d1 * load<f32>(xd + (<usize>b << 2), 4)));
      corr += blockCorr(w0, xs + (<usize>b << 2), d0, kind) + blockCorr(w1, xs + (<usize>b << 2) + 4, d1, kind);
    }
    if (b < nb) {
      const w0 = wr + <usize>b * stride;
      const x0 = xq + (<usize>b << 5);
      const v0 = v128.load(w0 + qsOff);
      let lo0 = v128.and(v0, mask), hi0 = hiNibbles(v0, mask);
      if (kind >= 2) {
        const qh0 = load<u32>(w0 + <usize>(kind == 2 ? 2 : 4));
        lo0 = v128.or(lo0, q5HighBits(qh0, 0)); hi0 = v128.or(hi0, q5HighBits(qh0, 1));
      }
      const p0 = dot2U7I8(lo0, v128.load(x0), hi0, v128.load(x0, 16));
      const d0 = loadF16(w0);
      acc0 = fmaF32x4(acc0, f32x4.convert_i32x4_s(p0), f32x4.splat(d0 * load<f32>(xd + (<usize>b << 2))));
      corr += blockCorr(w0, xs + (<usize>b << 2), d0, kind);
    }
    return hsumF32x4(f32x4.add(acc0, acc1)) + corr;
  } else {
    let acc: f32 = 0;
    for (let b = 0; b < nb; b++) {
      const w0 = wr + <usize>b * stride;
      const x0 = xq + (<usize>b << 5);
      const qh: u32 = kind >= 2 ? load<u32>(w0 + <usize>(kind == 2 ? 2 : 4)) : 0;
      let sumi: i32 = 0;
      for (let j = 0; j < 16; j++) {
        const byte = <i32>load<u8>(w0 + qsOff + <usize>j);
        const lo = (byte & 15) | (<i32>((qh >> j) & 1) << 4);
        const hi = (byte >> 4) | (<i32>((qh >> (j + 16)) & 1) << 4);
        sumi += lo * <i32>load<i8>(x0 + <usize>j) + hi * <i32>load<i8>(x0 + <usize>j + 16);
      }
      const d0 = loadF16(w0);
      acc += <f32>sumi * (d0 * load<f32>(xd + (<usize>b << 2)));
      corr += blockCorr(w0, xs + (<usize>b << 2), d0, kind);
    }
    return acc + corr;
  }
}

/** The offset/min term of one block: −8·d·s (Q4_0), −16·d·s (Q5_0) or m·s (Q4_1, Q5_1), s = d_x·Σqx. */
// @ts-ignore: decorator
@inline function blockCorr(wb: usize, sp: usize, d: f32, kind: i32): f32 {
  const s = load<f32>(sp);
  if (kind == 0) return -8 * d * s;
  if (kind == 2) return -16 * d * s;
  return loadF16(wb + 2) * s;
}

/** Q8_0 row · Q8 activation row. */
// @ts-ignore: decorator
@inline function rowDotQ8_0(wr: usize, xq: usize, nb: i32, k: i32, stride: usize): f32 {
  const xd = xq + <usize>k;
  if (ASC_FEATURE_SIMD) {
    let acc0 = f32x4.splat(0);
    let acc1 = f32x4.splat(0);
    for (let b = 0; b < nb; b++) {
      const w0 = wr + <usize>b * stride;
      const x0 = xq + (<usize>b << 5);
      const p = i32x4.add(dotI8I8(v128.load(w0, 2), v128.load(x0)), dotI8I8(v128.load(w0, 18), v128.load(x0, 16)));
      const dd = f32x4.splat(loadF16(w0) * load<f32>(xd + (<usize>b << 2)));
      if (b & 1) acc1 = fmaF32x4(acc1, f32x4.convert_i32x4_s(p), dd);
      else acc0 = fmaF32x4(acc0, f32x4.convert_i32x4_s(p), dd);
    }
    return hsumF32x4(f32x4.add(acc0, acc1));
  } else {
    let acc: f32 = 0;
    for (let b = 0; b < nb; b++) {
      const w0 = wr + <usize>b * stride;
      const x0 = xq + (<usize>b << 5);
      let sumi: i32 = 0;
      for (let j = 0; j < 32; j++) sumi += <i32>load<i8>(w0 + 2 + <usize>j) * <i32>load<i8>(x0 + <usize>j);
      acc += <f32>sumi * (loadF16(w0) * load<f32>(xd + (<usize>b << 2)));
    }
    return acc;
  }
}

/**
 * Four tokens at once against one weight row (prefill): the row's blocks are unpacked once and reused for all four
 * Q8 activation rows (x rows are `xrb` bytes apart); outputs go to out, out + outStrideBytes, … .
 */
// @ts-ignore: decorator
@inline function tile4Q45(wr: usize, xq: usize, xrb: usize, nb: i32, k: i32, kind: i32, stride: usize, out: usize, osb: usize): void {
  const qsOff: usize = kind == 0 ? 2 : kind == 1 ? 4 : kind == 2 ? 6 : 8;
  const mask = i8x16.splat(0x0f);
  const xd = xq + <usize>k; // token t's block scales at xd + t·xrb, sums nb·4 bytes later
  const xs = xd + (<usize>nb << 2);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let c0: f32 = 0, c1: f32 = 0, c2: f32 = 0, c3: f32 = 0;
  for (let b = 0; b < nb; b++) {
    const w0 = wr + <usize>b * stride;
    const v = v128.load(w0 + qsOff);
    let lo = v128.and(v, mask), hi = hiNibbles(v, mask);
    if (kind >= 2) {
      const qh = load<u32>(w0 + <usize>(kind == 2 ? 2 : 4));
      lo = v128.or(lo, q5HighBits(qh, 0));
      hi = v128.or(hi, q5HighBits(qh, 1));
    }
    const d = loadF16(w0);
    const xo = <usize>b << 5;
    const so = <usize>b << 2;
    a0 = fmaF32x4(a0, f32x4.convert_i32x4_s(dot2U7I8(lo, v128.load(xq + xo), hi, v128.load(xq + xo, 16))), f32x4.splat(d * load<f32>(xd + so)));
    a1 = fmaF32x4(a1, f32x4.convert_i32x4_s(dot2U7I8(lo, v128.load(xq + xrb + xo), hi, v128.load(xq + xrb + xo, 16))), f32x4.splat(d * load<f32>(xd + xrb + so)));
    a2 = fmaF32x4(a2, f32x4.convert_i32x4_s(dot2U7I8(lo, v128.load(xq + 2 * xrb + xo), hi, v128.load(xq + 2 * xrb + xo, 16))), f32x4.splat(d * load<f32>(xd + 2 * xrb + so)));
    a3 = fmaF32x4(a3, f32x4.convert_i32x4_s(dot2U7I8(lo, v128.load(xq + 3 * xrb + xo), hi, v128.load(xq + 3 * xrb + xo, 16))), f32x4.splat(d * load<f32>(xd + 3 * xrb + so)));
    c0 += blockCorr(w0, xs + so, d, kind);
    c1 += blockCorr(w0, xs + xrb + so, d, kind);
    c2 += blockCorr(w0, xs + 2 * xrb + so, d, kind);
    c3 += blockCorr(w0, xs + 3 * xrb + so, d, kind);
  }
  store<f32>(out, hsumF32x4(a0) + c0);
  store<f32>(out + osb, hsumF32x4(a1) + c1);
  store<f32>(out + 2 * osb, hsumF32x4(a2) + c2);
  store<f32>(out + 3 * osb, hsumF32x4(a3) + c3);
}

/** Q8_0 row · four Q8 activation rows (see tile4Q45): the weights are widened to i16 once per block. */
// @ts-ignore: decorator
@inline function tile4Q8_0(wr: usize, xq: usize, xrb: usize, nb: i32, k: i32, stride: usize, out: usize, osb: usize): void {
  const xd = xq + <usize>k;
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const w0 = wr + <usize>b * stride;
    const v0 = v128.load(w0, 2);
    const v1 = v128.load(w0, 18);
    const w00 = i16x8.extend_low_i8x16_s(v0), w01 = i16x8.extend_high_i8x16_s(v0);
    const w10 = i16x8.extend_low_i8x16_s(v1), w11 = i16x8.extend_high_i8x16_s(v1);
    const d = loadF16(w0);
    const xo = <usize>b << 5;
    const so = <usize>b << 2;
    for (let t = 0; t < 4; t++) {
      const xp = xq + <usize>t * xrb + xo;
      const x0 = v128.load(xp);
      const x1 = v128.load(xp, 16);
      const p = i32x4.add(
        i32x4.add(i32x4.dot_i16x8_s(w00, i16x8.extend_low_i8x16_s(x0)), i32x4.dot_i16x8_s(w01, i16x8.extend_high_i8x16_s(x0))),
        i32x4.add(i32x4.dot_i16x8_s(w10, i16x8.extend_low_i8x16_s(x1)), i32x4.dot_i16x8_s(w11, i16x8.extend_high_i8x16_s(x1))),
      );
      const dd = f32x4.splat(d * load<f32>(xd + <usize>t * xrb + so));
      if (t == 0) a0 = fmaF32x4(a0, f32x4.convert_i32x4_s(p), dd);
      else if (t == 1) a1 = fmaF32x4(a1, f32x4.convert_i32x4_s(p), dd);
      else if (t == 2) a2 = fmaF32x4(a2, f32x4.convert_i32x4_s(p), dd);
      else a3 = fmaF32x4(a3, f32x4.convert_i32x4_s(p), dd);
    }
  }
  store<f32>(out, hsumF32x4(a0));
  store<f32>(out + osb, hsumF32x4(a1));
  store<f32>(out + 2 * osb, hsumF32x4(a2));
  store<f32>(out + 3 * osb, hsumF32x4(a3));
}

// @ts-ignore: decorator
@inline function gemvQ45(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32, kind: i32): void {
  const nb = k >> 5;
  const blockBytes: usize = kind == 0 ? 18 : kind == 1 ? 20 : kind == 2 ? 22 : 24;
  const rowBytes = <usize>nb * blockBytes;
  const paired = kind == 0 || kind == 2; // Q4_0, Q5_0: row-pair layout
  const stride = paired ? blockBytes << 1 : blockBytes; // bytes from one block of a row to its next
  const xrb = q8RowBytes(k);
  const tiled = ASC_FEATURE_SIMD ? n & ~3 : 0; // tokens taken four at a time
  if (ASC_FEATURE_SIMD) {
    for (let r = r0; r < r1; ) {
      const wr = rowAt(w, r, rowBytes, blockBytes, paired);
      if (paired && isPairStart(r, r1)) {
        // Q4_0, Q5_0: two rows × four tokens per tile.
        for (let t = 0; t < tiled; t += 4) {
          tile4PairQ45(wr, x + <usize>t * xrb, xrb, nb, k, outPtr(out, t, outStride, r), <usize>outStride << 2, kind);
        }
        r += 2;
      } else {
        for (let t = 0; t < tiled; t += 4) {
          tile4Q45(wr, x + <usize>t * xrb, xrb, nb, k, kind, stride, outPtr(out, t, outStride, r), <usize>outStride << 2);
        }
        r++;
      }
    }
  }
  for (let t = tiled; t < n; t++) {
    const xt = x + <usize>t * xrb;
    for (let r = r0; r < r1; ) {
      const wr = rowAt(w, r, rowBytes, blockBytes, paired);
      if (ASC_FEATURE_SIMD && paired && isPairStart(r, r1)) {
        rowPairQ45(wr, xt, nb, k, outPtr(out, t, outStride, r), 4, kind);
        r += 2;
      } else {
        store<f32>(outPtr(out, t, outStride, r), rowDotQ45(wr, xt, nb, k, kind, stride));
        r++;
      }
    }
  }
}

/** Q4_0 weights [nRows, k] · Q8 activations [n, k] → out f32 [n, outStride], rows r0…r1−1. */
export function gemv_q4_0(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvQ45(w, x, out, k, r0, r1, n, outStride, 0);
}

/** Q4_1 weights · Q8 activations (see gemv_q4_0). */
export function gemv_q4_1(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvQ45(w, x, out, k, r0, r1, n, outStride, 1);
}

/** Q5_0 weights · Q8 activations (see gemv_q4_0). */
export function gemv_q5_0(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvQ45(w, x, out, k, r0, r1, n, outStride, 2);
}

/** Q5_1 weights · Q8 activations (see gemv_q4_0). */
export function gemv_q5_1(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  gemvQ45(w, x, out, k, r0, r1, n, outStride, 3);
}

/** Q8_0 weights (row-pair layout) · Q8 activations (see gemv_q4_0). */
export function gemv_q8_0(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const nb = k >> 5;
  const rowBytes = <usize>nb * 34;
  const xrb = q8RowBytes(k);
  const tiled = ASC_FEATURE_SIMD ? n & ~3 : 0; // tokens taken four at a time
  for (let r = r0; r < r1; r++) {
    const wr = rowAt(w, r, rowBytes, 34, true);
    if (ASC_FEATURE_SIMD) {
      for (let t = 0; t < tiled; t += 4) {
        tile4Q8_0(wr, x + <usize>t * xrb, xrb, nb, k, 68, outPtr(out, t, outStride, r), <usize>outStride << 2);
      }
    }
    if (!ASC_FEATURE_RELAXED_SIMD) {
      // simd128 measured faster with this one-block loop (its dot has no i8·i7 instruction to gain).
      for (let t = tiled; t < n; t++) store<f32>(outPtr(out, t, outStride, r), rowDotQ8_0(wr, x + <usize>t * xrb, nb, k, 68));
    }
  }
  if (ASC_FEATURE_RELAXED_SIMD) {
    for (let t = tiled; t < n; t++) {
      const xt = x + <usize>t * xrb;
      for (let r = r0; r < r1; ) {
        const wr = rowAt(w, r, rowBytes, 34, true);
        if (isPairStart(r, r1)) {
          rowPairQ8_0(wr, xt, nb, k, outPtr(out, t, outStride, r), 4);
          r += 2;
        } else {
          store<f32>(outPtr(out, t, outStride, r), rowQ8_0(wr, xt, nb, k, 68));
          r++;
        }
      }
    }
  }
}
