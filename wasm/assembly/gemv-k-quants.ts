/**
 * Fused matvecs for ggml's 256-element "K" super-blocks — Q4_K, Q5_K, Q6_K — against Q8 activations
 * (q8-activations.ts; 32-element activation blocks, finer than llama.cpp's Q8_K, so at least as accurate).
 * Block layouts (ggml-common.h): block_q4_K {f16 d, dmin; u8 scales[12]; u8 qs[128]} = 144 B,
 * block_q5_K {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]} = 176 B,
 * block_q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d} = 210 B. Values stay unsigned (≤ 63) for the i7 dot;
 * Q4_K/Q5_K mins fold in through the activation block sums s, Q6_K's −32 through the 16-lane sums isum16.
 */
import { q8RowBytes } from './q8-activations';
import { dot2U4I8I16, dot2U7I8, dotU7I8, fmaF32x4, hiNibbles, hsum4I16, hsum4I32, hsumF32x4 } from './simd-dot';
import { loadScaleF16 } from './f16-scales';

/** 6-bit scale j (0…7) of a Q4_K/Q5_K `scales[12]` (ggml get_scale_min_k4). */
// @ts-ignore: decorator
@inline function scaleK(sc: usize, j: i32): f32 {
  return <f32>(j < 4
    ? <i32>load<u8>(sc + <usize>j) & 63
    : (<i32>load<u8>(sc + <usize>j + 4) & 15) | ((<i32>load<u8>(sc + <usize>j - 4) >> 6) << 4));
}

/** 6-bit min j (0…7) of a Q4_K/Q5_K `scales[12]`. */
// @ts-ignore: decorator
@inline function minK(sc: usize, j: i32): f32 {
  return <f32>(j < 4
    ? <i32>load<u8>(sc + <usize>j + 4) & 63
    : (<i32>load<u8>(sc + <usize>j + 4) >> 4) | ((<i32>load<u8>(sc + <usize>j) >> 6) << 4));
}

/** Q4_K (hasHigh = false) or Q5_K (true) row · Q8 activation row. */
// @ts-ignore: decorator
@inline function rowDotQ45K(wr: usize, xq: usize, k: i32, hasHigh: bool): f32 {
  if (ASC_FEATURE_SIMD) return rowDotQ45KSimd(wr, xq, k, hasHigh);
  const nbk = k >> 8;
  const nb = k >> 5;
  const blockBytes: usize = hasHigh ? 176 : 144;
  const qsOff: usize = hasHigh ? 48 : 16;
  const xd = xq + <usize>k;
  const xs = xd + (<usize>nb << 2);
  let corr: f32 = 0;
  let accS: f32 = 0;
  for (let i = 0; i < nbk; i++) {
    const wb = wr + <usize>i * blockBytes;
    const d = loadScaleF16(wb);
    const dmin = loadScaleF16(wb + 2);
    const sc = wb + 4;
    for (let j = 0; j < 4; j++) {
      const qs = wb + qsOff + (<usize>j << 5);
      const xi = xq + (<usize>i << 8) + (<usize>j << 6);
      const bl = (i << 3) + (j << 1);
      const dlo = d * scaleK(sc, 2 * j) * load<f32>(xd + (<usize>bl << 2));
      const dhi = d * scaleK(sc, 2 * j + 1) * load<f32>(xd + (<usize>bl << 2), 4);
      corr += dmin * (minK(sc, 2 * j) * load<f32>(xs + (<usize>bl << 2)) + minK(sc, 2 * j + 1) * load<f32>(xs + (<usize>bl << 2), 4));
      let slo: i32 = 0;
      let shi: i32 = 0;
      for (let l = 0; l < 32; l++) {
        const byte = <i32>load<u8>(qs + <usize>l);
        let lo = byte & 15;
        let hi = byte >> 4;
        if (hasHigh) {
          const h = <i32>load<u8>(wb + 16 + <usize>l);
          lo |= ((h >> (2 * j)) & 1) << 4;
          hi |= ((h >> (2 * j + 1)) & 1) << 4;
        }
        slo += lo * <i32>load<i8>(xi + <usize>l);
        shi += hi * <i32>load<i8>(xi + 32 + <usize>l);
      }
      accS += <f32>slo * dlo + <f32>shi * dhi;
    }
  }
  return accS - corr;
}

/**
 * Four u8 (a u32) → f32x4. The signed conversion is exact for 0…255 and one x86 instruction; the unsigned one has
 * no SSE/AVX2 form and V8 expands it into a sequence (Q4_K decode matvec 10.0–10.2 → 11.3–12.0 GB/s with this).
 */
// @ts-ignore: decorator
@inline function bytesToF32x4(u: u32): v128 {
  return f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(i32x4.splat(u))));
}

/** i32x4 partial sums of sub-block s (0…7) of a Q4_K/Q5_K block `wb` with the 32 activation quants at `xi`. */
// @ts-ignore: decorator
@inline function subBlockDot(wb: usize, xi: usize, s: i32, hasHigh: bool): v128 {
  const qs = wb + (hasHigh ? 48 : 16) + (<usize>(s >> 1) << 5);
  let q0 = v128.load(qs);
  let q1 = v128.load(qs, 16);
  const mask = i8x16.splat(0x0f);
  if (s & 1) {
    q0 = hiNibbles(q0, mask);
    q1 = hiNibbles(q1, mask);
  } else {
    q0 = v128.and(q0, mask);
    q1 = v128.and(q1, mask);
  }
  if (hasHigh) {
    const one = i8x16.splat(1);
    // 16-bit shifts are exact here: the masks keep only bits that stay inside their byte (x86 has no 8-bit shift).
    q0 = v128.or(q0, i16x8.shl(v128.and(i16x8.shr_u(v128.load(wb, 16), s), one), 4));
    q1 = v128.or(q1, i16x8.shl(v128.and(i16x8.shr_u(v128.load(wb, 32), s), one), 4));
  }
  return dot2U7I8(q0, v128.load(xi), q1, v128.load(xi, 16));
}

/** [Σ sub-block 4j … 4j + 3] as i32x4 for the 64 quant bytes at `qs` (sub-blocks: low nibbles, high, low, high). */
// @ts-ignore: decorator
@inline function quadQ4K(qs: usize, xi: usize): v128 {
  const mask = i8x16.splat(0x0f);
  const v0 = v128.load(qs), v1 = v128.load(qs, 16), v2 = v128.load(qs, 32), v3 = v128.load(qs, 48);
  return hsum4I16(
    dot2U4I8I16(v128.and(v0, mask), v128.load(xi), v128.and(v1, mask), v128.load(xi, 16)),
    dot2U4I8I16(hiNibbles(v0, mask), v128.load(xi, 32), hiNibbles(v1, mask), v128.load(xi, 48)),
    dot2U4I8I16(v128.and(v2, mask), v128.load(xi, 64), v128.and(v3, mask), v128.load(xi, 80)),
    dot2U4I8I16(hiNibbles(v2, mask), v128.load(xi, 96), hiNibbles(v3, mask), v128.load(xi, 112)),
  );
}

/**
 * SIMD Q4_K/Q5_K row dot: the eight 6-bit scales and mins of a block are unpacked at once (ggml's kmask trick)
 * into f32x4s, multiplied by the activation block scales/sums as vectors, and the eight integer sub-block dots are
 * transposed into two f32x4 — no scalar work per sub-block.
 */
// @ts-ignore: decorator
@inline function rowDotQ45KSimd(wr: usize, xq: usize, k: i32, hasHigh: bool): f32 {
  const nbk = k >> 8;
  const nb = k >> 5;
  const blockBytes: usize = hasHigh ? 176 : 144;
  const xd = xq + <usize>k;
  const xs = xd + (<usize>nb << 2);
  let acc = f32x4.splat(0);
  let corr = f32x4.splat(0);
  for (let i = 0; i < nbk; i++) {
    const wb = wr + <usize>i * blockBytes;
    const u0 = load<u32>(wb, 4);
    const u1 = load<u32>(wb, 8);
    const u2 = load<u32>(wb, 12);
    const sc03 = bytesToF32x4(u0 & 0x3f3f3f3f);
    const sc47 = bytesToF32x4((u2 & 0x0f0f0f0f) | (((u0 >> 6) & 0x03030303) << 4));
    const m03 = bytesToF32x4(u1 & 0x3f3f3f3f);
    const m47 = bytesToF32x4(((u2 >> 4) & 0x0f0f0f0f) | (((u1 >> 6) & 0x03030303) << 4));
    const d = f32x4.splat(loadScaleF16(wb));
    const dmin = f32x4.splat(loadScaleF16(wb + 2));
    const xb = <usize>i << 5; // byte offset of this block's 8 activation scales / sums
    corr = fmaF32x4(corr, f32x4.mul(m03, dmin), v128.load(xs + xb));
    corr = fmaF32x4(corr, f32x4.mul(m47, dmin), v128.load(xs + xb, 16));
    const xi = xq + (<usize>i << 8);
    let lo: v128, hi: v128;
    if (hasHigh) {
      lo = hsum4I32(subBlockDot(wb, xi, 0, hasHigh), subBlockDot(wb, xi + 32, 1, hasHigh), subBlockDot(wb, xi + 64, 2, hasHigh), subBlockDot(wb, xi + 96, 3, hasHigh));
      hi = hsum4I32(subBlockDot(wb, xi + 128, 4, hasHigh), subBlockDot(wb, xi + 160, 5, hasHigh), subBlockDot(wb, xi + 192, 6, hasHigh), subBlockDot(wb, xi + 224, 7, hasHigh));
    } else {
      // Q4_K: 4-bit values, so four sub-block dots add in i16 (dot2U4I8I16 / hsum4I16) before one widening.
      lo = quadQ4K(wb + 16, xi);
      hi = quadQ4K(wb + 80, xi + 128);
    }
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(lo), f32x4.mul(f32x4.mul(sc03, d), v128.load(xd + xb)));
    acc = fmaF32x4(acc, f32x4.convert_i32x4_s(hi), f32x4.mul(f32x4.mul(sc47, d), v128.load(xd + xb, 16)));
  }
  return hsumF32x4(f32x4.sub(acc, corr));
}

/** The four unpacked 64-element halves' sub-block dots of one token (see tile4Q4K): lanes = sub-blocks 4q … 4q + 3. */
// @ts-ignore: decorator
@inline function quadDots(l0: v128, l1: v128, h0: v128, h1: v128, l2: v128, l3: v128, h2: v128, h3: v128, xi: usize): v128 {
  return hsum4I16(
    dot2U4I8I16(l0, v128.load(xi), l1, v128.load(xi, 16)),
    dot2U4I8I16(h0, v128.load(xi, 32), h1, v128.load(xi, 48)),
    dot2U4I8I16(l2, v128.load(xi, 64), l3, v128.load(xi, 80)),
    dot2U4I8I16(h2, v128.load(xi, 96), h3, v128.load(xi, 112)),
  );
}

/**
 * Prefill tile: one Q4_K row · four Q8 activation rows (xq, xq + xrb, …) → out[t·osb], t < 4. Each super-block's
 * scales and mins are unpacked once and each 128-element half's quants once, then run against every token (the
 * one-token path redoes both per token); the mins fold into the same accumulator as −dmin·m·s.
 */
// @ts-ignore: decorator
@inline function tile4Q4K(wr: usize, xq: usize, xrb: usize, k: i32, out: usize, osb: usize): void {
  const nbk = k >> 8;
  const nb = k >> 5;
  const xd = xq + <usize>k;
  const xs = xd + (<usize>nb << 2);
  const mask = i8x16.splat(0x0f);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  for (let i = 0; i < nbk; i++) {
    const wb = wr + <usize>i * 144;
    const u0 = load<u32>(wb, 4);
    const u1 = load<u32>(wb, 8);
    const u2 = load<u32>(wb, 12);
    const d = f32x4.splat(loadScaleF16(wb));
    const ndmin = f32x4.splat(-loadScaleF16(wb + 2));
    const xb = <usize>i << 5; // byte offset of this block's 8 activation scales / sums
    const xi = xq + (<usize>i << 8);
    for (let q = 0; q < 2; q++) {
      // Half q: sub-blocks 4q … 4q + 3 (scales/mins j < 4 for q = 0, j ≥ 4 for q = 1).
      const scd = f32x4.mul(d, q == 0 ? bytesToF32x4(u0 & 0x3f3f3f3f) : bytesToF32x4((u2 & 0x0f0f0f0f) | (((u0 >> 6) & 0x03030303) << 4)));
      const mn = f32x4.mul(ndmin, q == 0 ? bytesToF32x4(u1 & 0x3f3f3f3f) : bytesToF32x4(((u2 >> 4) & 0x0f0f0f0f) | (((u1 >> 6) & 0x03030303) << 4)));
      const qs = wb + 16 + (<usize>q << 6);
      const v0 = v128.load(qs), v1 = v128.load(qs, 16), v2 = v128.load(qs, 32), v3 = v128.load(qs, 48);
      const l0 = v128.and(v0, mask), l1 = v128.and(v1, mask), h0 = hiNibbles(v0, mask), h1 = hiNibbles(v1, mask);
      const l2 = v128.and(v2, mask), l3 = v128.and(v3, mask), h2 = hiNibbles(v2, mask), h3 = hiNibbles(v3, mask);
      const xo = <usize>q << 7;
      const so = xb + (<usize>q << 4);
      a0 = fmaF32x4(fmaF32x4(a0, mn, v128.load(xs + so)), f32x4.convert_i32x4_s(quadDots(l0, l1, h0, h1, l2, l3, h2, h3, xi + xo)), f32x4.mul(scd, v128.load(xd + so)));
      a1 = fmaF32x4(fmaF32x4(a1, mn, v128.load(xs + xrb + so)), f32x4.convert_i32x4_s(quadDots(l0, l1, h0, h1, l2, l3, h2, h3, xi + xrb + xo)), f32x4.mul(scd, v128.load(xd + xrb + so)));
      a2 = fmaF32x4(fmaF32x4(a2, mn, v128.load(xs + 2 * xrb + so)), f32x4.convert_i32x4_s(quadDots(l0, l1, h0, h1, l2, l3, h2, h3, xi + 2 * xrb + xo)), f32x4.mul(scd, v128.load(xd + 2 * xrb + so)));
      a3 = fmaF32x4(fmaF32x4(a3, mn, v128.load(xs + 3 * xrb + so)), f32x4.convert_i32x4_s(quadDots(l0, l1, h0, h1, l2, l3, h2, h3, xi + 3 * xrb + xo)), f32x4.mul(scd, v128.load(xd + 3 * xrb + so)));
    }
  }
  store<f32>(out, hsumF32x4(a0));
  store<f32>(out + osb, hsumF32x4(a1));
  store<f32>(out + 2 * osb, hsumF32x4(a2));
  store<f32>(out + 3 * osb, hsumF32x4(a3));
}

/** Q6_K row · Q8 activation row (scalar build; the SIMD builds use tileQ6K). */
// @ts-ignore: decorator
@inline function rowDotQ6K(wr: usize, xq: usize, k: i32): f32 {
  const nbk = k >> 8;
  const nb = k >> 5;
  const xd = xq + <usize>k;
  const xh = xd + (<usize>nb << 3);
  let accS: f32 = 0;
  let corr: f32 = 0;
  for (let i = 0; i < nbk; i++) {
    const wb = wr + <usize>i * 210;
    const d = loadScaleF16(wb + 208);
    for (let h = 0; h < 2; h++) {
      const ql = wb + (<usize>h << 6);
      const qh = wb + 128 + (<usize>h << 5);
      const sc = wb + 192 + (<usize>h << 3);
      for (let g = 0; g < 4; g++) {
        const bi = (i << 3) + (h << 2) + g;
        const dd = d * load<f32>(xd + (<usize>bi << 2));
        const s0 = <i32>load<i8>(sc + <usize>(2 * g));
        const s1 = <i32>load<i8>(sc + <usize>(2 * g + 1));
        const xi = xq + (<usize>bi << 5);
        const isum0 = load<i32>(xh + (<usize>bi << 3));
        const isum1 = load<i32>(xh + (<usize>bi << 3), 4);
        const ci: i32 = 32 * (s0 * isum0 + s1 * isum1);
        corr += <f32>ci * dd;
        const qlOff: usize = (g & 1) ? 32 : 0;
        const nibShift = (g & 2) ? 4 : 0;
        let d0: i32 = 0;
        let d1: i32 = 0;
        for (let l = 0; l < 32; l++) {
          const lv = (<i32>load<u8>(ql + qlOff + <usize>l) >> nibShift) & 15;
          const hv = (<i32>load<u8>(qh + <usize>l) >> (2 * g)) & 3;
          const p = (lv | (hv << 4)) * <i32>load<i8>(xi + <usize>l);
          if (l < 16) d0 += p; else d1 += p;
        }
        accS += <f32>(s0 * d0 + s1 * d1) * dd;
      }
    }
  }
  return accS - corr;
}

/** One token's half-block of tileQ6K: acc + its 8 sub-block dots with quants q0 … q7, scaled (see tileQ6K). */
// @ts-ignore: decorator
@inline function q6HalfToken(
  acc: v128, q0: v128, q1: v128, q2: v128, q3: v128, q4: v128, q5: v128, q6: v128, q7: v128,
  sc0: v128, sc1: v128, d: v128, xi: usize, hs: usize, xdb: usize,
): v128 {
  const thirtyTwo = i32x4.splat(32);
  const g0 = hsum4I32(dotU7I8(q0, v128.load(xi)), dotU7I8(q1, v128.load(xi, 16)), dotU7I8(q2, v128.load(xi, 32)), dotU7I8(q3, v128.load(xi, 48)));
  const g1 = hsum4I32(dotU7I8(q4, v128.load(xi, 64)), dotU7I8(q5, v128.load(xi, 80)), dotU7I8(q6, v128.load(xi, 96)), dotU7I8(q7, v128.load(xi, 112)));
  const v0 = i32x4.mul(i32x4.sub(g0, i32x4.mul(thirtyTwo, v128.load(hs))), sc0);
  const v1 = i32x4.mul(i32x4.sub(g1, i32x4.mul(thirtyTwo, v128.load(hs, 16))), sc1);
  const xs4 = f32x4.mul(d, v128.load(xdb));
  return fmaF32x4(fmaF32x4(acc, f32x4.convert_i32x4_s(v0), i32x4.shuffle(xs4, xs4, 0, 0, 1, 1)), f32x4.convert_i32x4_s(v1), i32x4.shuffle(xs4, xs4, 2, 2, 3, 3));
}

/**
 * One Q6_K row · `nTok` (1 or 4) Q8 activation rows (xq, xq + xrb, …) → out[t·osb]. Per 128-element half, the 6-bit
 * quants and i8 scales are assembled once and dotted with every token: the eight 16-lane dots transpose into two
 * i32x4, the −32 offset comes off as 32·isum16 (a vector load), the scales multiply as integers, and one f32 fma per
 * four 16-lane sub-blocks applies d · d_x.
 */
// @ts-ignore: decorator
@inline function tileQ6K(wr: usize, xq: usize, xrb: usize, k: i32, out: usize, osb: usize, nTok: i32): void {
  const nbk = k >> 8;
  const nb = k >> 5;
  const xd = xq + <usize>k;
  const xh = xd + (<usize>nb << 3);
  const mask = i8x16.splat(0x0f);
  const three = i8x16.splat(3);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  for (let i = 0; i < nbk; i++) {
    const wb = wr + <usize>i * 210;
    const d = f32x4.splat(loadScaleF16(wb + 208));
    for (let h = 0; h < 2; h++) {
      const ql = wb + (<usize>h << 6);
      const qh = wb + 128 + (<usize>h << 5);
      const bi = (i << 3) + (h << 2); // first of the 4 activation blocks
      const l0 = v128.load(ql), l1 = v128.load(ql, 16), l2 = v128.load(ql, 32), l3 = v128.load(ql, 48);
      const h0 = v128.load(qh), h1 = v128.load(qh, 16);
      // group g, half-lane is: nibble of ql[(g & 1)·32 + 16·is] (low for g < 2), 2 bits of qh[16·is] >> 2g.
      // 16-bit shifts are exact here: the masks keep only bits that stay inside their byte (x86 has no 8-bit shift).
      const q0 = v128.or(v128.and(l0, mask), i16x8.shl(v128.and(h0, three), 4));
      const q1 = v128.or(v128.and(l1, mask), i16x8.shl(v128.and(h1, three), 4));
      const q2 = v128.or(v128.and(l2, mask), i16x8.shl(v128.and(i16x8.shr_u(h0, 2), three), 4));
      const q3 = v128.or(v128.and(l3, mask), i16x8.shl(v128.and(i16x8.shr_u(h1, 2), three), 4));
      const q4 = v128.or(hiNibbles(l0, mask), i16x8.shl(v128.and(i16x8.shr_u(h0, 4), three), 4));
      const q5 = v128.or(hiNibbles(l1, mask), i16x8.shl(v128.and(i16x8.shr_u(h1, 4), three), 4));
      const q6 = v128.or(hiNibbles(l2, mask), i16x8.shl(v128.and(i16x8.shr_u(h0, 6), three), 4));
      const q7 = v128.or(hiNibbles(l3, mask), i16x8.shl(v128.and(i16x8.shr_u(h1, 6), three), 4));
      const sc = i16x8.extend_low_i8x16_s(v128.load64_zero(wb + 192 + (<usize>h << 3)));
      const sc0 = i32x4.extend_low_i16x8_s(sc);
      const sc1 = i32x4.extend_high_i16x8_s(sc);
      const xi = xq + (<usize>bi << 5);
      const hs = xh + (<usize>bi << 3);
      const xdb = xd + (<usize>bi << 2);
      a0 = q6HalfToken(a0, q0, q1, q2, q3, q4, q5, q6, q7, sc0, sc1, d, xi, hs, xdb);
      if (nTok == 4) {
        a1 = q6HalfToken(a1, q0, q1, q2, q3, q4, q5, q6, q7, sc0, sc1, d, xi + xrb, hs + xrb, xdb + xrb);
        a2 = q6HalfToken(a2, q0, q1, q2, q3, q4, q5, q6, q7, sc0, sc1, d, xi + 2 * xrb, hs + 2 * xrb, xdb + 2 * xrb);
        a3 = q6HalfToken(a3, q0, q1, q2, q3, q4, q5, q6, q7, sc0, sc1, d, xi + 3 * xrb, hs + 3 * xrb, xdb + 3 * xrb);
      }
    }
  }
  store<f32>(out, hsumF32x4(a0));
  if (nTok == 4) {
    store<f32>(out + osb, hsumF32x4(a1));
    store<f32>(out + 2 * osb, hsumF32x4(a2));
    store<f32>(out + 3 * osb, hsumF32x4(a3));
  }
}

/** Q4_K weights [nRows, k] · Q8 activations [n, k] → out f32 [n, outStride], rows r0…r1−1 (k % 256 == 0). */
export function gemv_q4_k(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const rowBytes = <usize>(k >> 8) * 144;
  const xrb = q8RowBytes(k);
  const tiled = ASC_FEATURE_SIMD ? n & ~3 : 0; // tokens taken four at a time
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    if (ASC_FEATURE_SIMD) {
      for (let t = 0; t < tiled; t += 4) {
        tile4Q4K(wr, x + <usize>t * xrb, xrb, k, out + ((<usize>t * <usize>outStride + <usize>r) << 2), <usize>outStride << 2);
      }
    }
    for (let t = tiled; t < n; t++) {
      store<f32>(out + ((<usize>t * <usize>outStride + <usize>r) << 2), rowDotQ45K(wr, x + <usize>t * xrb, k, false));
    }
  }
}

/** Q5_K weights · Q8 activations (see gemv_q4_k). */
export function gemv_q5_k(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const rowBytes = <usize>(k >> 8) * 176;
  const xrb = q8RowBytes(k);
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) {
      store<f32>(out + ((<usize>t * <usize>outStride + <usize>r) << 2), rowDotQ45K(wr, x + <usize>t * xrb, k, true));
    }
  }
}

/** Q6_K weights · Q8 activations (see gemv_q4_k). */
export function gemv_q6_k(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  const rowBytes = <usize>(k >> 8) * 210;
  const xrb = q8RowBytes(k);
  const tiled = ASC_FEATURE_SIMD ? n & ~3 : 0; // tokens taken four at a time
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    if (ASC_FEATURE_SIMD) {
      for (let t = 0; t < tiled; t += 4) {
        tileQ6K(wr, x + <usize>t * xrb, xrb, k, out + ((<usize>t * <usize>outStride + <usize>r) << 2), <usize>outStride << 2, 4);
      }
      for (let t = tiled; t < n; t++) tileQ6K(wr, x + <usize>t * xrb, xrb, k, out + ((<usize>t * <usize>outStride + <usize>r) << 2), 0, 1);
    } else {
      for (let t = 0; t < n; t++) store<f32>(out + ((<usize>t * <usize>outStride + <usize>r) << 2), rowDotQ6K(wr, x + <usize>t * xrb, k));
    }
  }
}
