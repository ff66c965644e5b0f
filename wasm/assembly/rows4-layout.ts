/**
 * The 4-row weight layout of the relaxed-SIMD builds (src/backend/wasm/rows4-layout.ts), for block types made of f16
 * fields at the block's start (`head` of them: Q4_0 1, Q4_K 2) or end (`tail`: Q6_K 1) and a body of 32-bit words:
 * rows 4g … 4g + 3 form group g, stored where those four rows lie in the GGUF file (a row count off a multiple of 4
 * is padded with zero rows). Block b of a group takes 4·blockBytes bytes: each f16 field of the four rows (8 bytes a
 * field, head fields then tail fields), then 16-byte chunks, chunk j holding body word j (bytes 4j … 4j + 3) of rows
 * 0, 1, 2, 3 — the "lanes = rows" layout of llama.cpp's CPU repack kernels. A kernel splats four activation bytes to
 * every lane and one dot serves four rows (gemv-stored-rows4.ts, gemv-k-rows4.ts). Signed quants (Q8_0) are stored
 * with their sign bit flipped (`flip` 0x80: u = w + 128, 0…255; gemv-q8-rows4.ts reads its two nibbles), the f16
 * fields as they are. Q5_0, Q6_K and Q5_K (`recode`) have each row's block body re-coded first (q5Encode, q6Encode,
 * q5kEncode).
 */
import { hiNibbles, q5HighBits } from './simd-dot';

/**
 * Re-codes the Q5_0 block body at `p` (GGUF: u32 qh, then qs[16]; 20 bytes) in place for gemv-q5-rows4.ts, quants
 * q_e = nibble | 5th bit << 4 (0…31): bytes 4m + i (m, i < 4) = q_{4m+i} | (q_{16+4m+i} & 7) << 5, bytes 16 + i =
 * Σ_m (q_{16+4m+i} >> 3) << 2m. Quants 0…15 are then one mask away and 16…31 two shifts, two masks and an or,
 * with no bit lookups. (SIMD only where the 4-row kernels run; a scalar loop elsewhere, never used there.)
 */
// @ts-ignore: decorator
@inline function q5Encode(p: usize): void {
  if (ASC_FEATURE_SIMD) {
    const m4 = i8x16.splat(0x0f);
    const qh = load<u32>(p);
    const v = v128.load(p, 4);
    const lo = v128.or(v128.and(v, m4), q5HighBits(qh, 0)); // quants 0…15
    const hi = v128.or(hiNibbles(v, m4), q5HighBits(qh, 1)); // quants 16…31
    v128.store(p, v128.or(lo, i16x8.shl(v128.and(hi, i8x16.splat(7)), 5)));
    const t = v128.and(i16x8.shr_u(hi, 3), i8x16.splat(3)); // top two bits of 16 + 4m + i at byte 4m + i
    const e = i32x4.extract_lane(t, 0) | (i32x4.extract_lane(t, 1) << 2) | (i32x4.extract_lane(t, 2) << 4) | (i32x4.extract_lane(t, 3) << 6);
    store<u32>(p, e, 16);
  } else {
    const qh = load<u32>(p);
    let e: u32 = 0;
    for (let j: usize = 0; j < 16; j++) {
      const b = <u32>load<u8>(p + 4 + j);
      const lo = (b & 15) | (((qh >> <u32>j) & 1) << 4);
      const hi = (b >> 4) | (((qh >> <u32>(j + 16)) & 1) << 4);
      store<u8>(p + j, <u8>(lo | ((hi & 7) << 5)));
      e |= (hi >> 3) << <u32>(((j & 3) << 3) + ((j >> 2) << 1));
    }
    store<u32>(p, e, 16);
  }
}

/**
 * Re-codes the Q6_K super-block body at `p` (GGUF: ql[128], qh[64], then the 16 scales; 208 bytes) in place for
 * gemv-q6-k-rows4.ts: activation block b (elements 32b … 32b + 31, 6-bit quants q_l) takes words 6b … 6b + 5 — word
 * 3s + k (s < 2, k < 3): bytes i = q_{16s+4k+i} | ((q_{16s+12+i} >> 2k) & 3) << 6 (q6Half) — so three chunks of four
 * quants × four rows are one mask away and the fourth is assembled from their top bits; the scales stay in words
 * 48 … 51. Every input vector is loaded before the first store. (SIMD builds; the 4-row kernels need relaxed
 * SIMD, so elsewhere this is never called.)
 */
// @ts-ignore: decorator
@inline function q6Encode(p: usize): void {
  if (!ASC_FEATURE_SIMD) {
    unreachable();
    return;
  }
  const l0 = v128.load(p), l1 = v128.load(p, 16), l2 = v128.load(p, 32), l3 = v128.load(p, 48);
  const l4 = v128.load(p, 64), l5 = v128.load(p, 80), l6 = v128.load(p, 96), l7 = v128.load(p, 112);
  const h0 = v128.load(p, 128), h1 = v128.load(p, 144), h2 = v128.load(p, 160), h3 = v128.load(p, 176);
  q6Block(p, l0, l1, h0, h1, 0, 0);
  q6Block(p + 24, l2, l3, h0, h1, 0, 1);
  q6Block(p + 48, l0, l1, h0, h1, 1, 2);
  q6Block(p + 72, l2, l3, h0, h1, 1, 3);
  q6Block(p + 96, l4, l5, h2, h3, 0, 0);
  q6Block(p + 120, l6, l7, h2, h3, 0, 1);
  q6Block(p + 144, l4, l5, h2, h3, 1, 2);
  q6Block(p + 168, l6, l7, h2, h3, 1, 3);
}

/**
 * One activation block of q6Encode: its 32 quants from ql vectors a (elements 0…15), b (16…31), low nibbles
 * (`high` 0) or high (1), and 2-bit fields g of qh vectors ha, hb → 24 bytes at o (q6Half per 16 quants).
 */
// @ts-ignore: decorator
@inline function q6Block(o: usize, a: v128, b: v128, ha: v128, hb: v128, high: i32, g: i32): void {
  const m4 = i8x16.splat(15);
  const m2 = i8x16.splat(3);
  const qa = high ? hiNibbles(a, m4) : v128.and(a, m4);
  const qb = high ? hiNibbles(b, m4) : v128.and(b, m4);
  // 16-bit shifts are exact here: the masks keep only bits that stay inside their byte (x86 has no 8-bit shift).
  q6Half(o, v128.or(qa, i16x8.shl(v128.and(i16x8.shr_u(ha, <u32>(g << 1)), m2), 4)));
  q6Half(o + 12, v128.or(qb, i16x8.shl(v128.and(i16x8.shr_u(hb, <u32>(g << 1)), m2), 4)));
}

/**
 * 16 six-bit quants q (bytes) → 12 bytes at o: byte 4k + i (k < 3, i < 4) = q_{4k+i} | ((q_{12+i} >> 2k) & 3) << 6.
 */
// @ts-ignore: decorator
@inline function q6Half(o: usize, q: v128): void {
  const r = i8x16.shuffle(q, q, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15);
  const top = v128.or(
    v128.or(
      v128.and(i16x8.shl(r, 6), i32x4(0xc0c0c0c0, 0, 0, 0)),
      v128.and(i16x8.shl(r, 4), i32x4(0, 0xc0c0c0c0, 0, 0)),
    ),
    v128.and(i16x8.shl(r, 2), i32x4(0, 0, 0xc0c0c0c0, 0)),
  );
  const out = v128.or(q, top);
  v128.store64_lane(o, out, 0);
  v128.store32_lane(o, out, 2, 8);
}

/**
 * Re-codes the Q5_K super-block body at `p` (GGUF: scales[12], qh[32], qs[128]; 172 bytes) in place for
 * gemv-q5-k-rows4.ts: the scales stay in words 0 … 2; sub-block pair c (sub-blocks 2c, 2c + 1, 5-bit quants a_l,
 * b_l, l < 32) takes words 3 + 10c … 12 + 10c — bytes l = a_l | (b_l & 7) << 5, then bytes 32 + 4t + i =
 * Σ_{m < 4} (b_{16t+4m+i} >> 3) << 2m (t = 0, 1) — the Q5_0 re-coding (q5Encode) with the pair's sub-blocks as its
 * halves, so a's are one mask away and b's two shifts, two masks and an or at constant shifts. Every input vector
 * is loaded before the first store. (SIMD builds; the 4-row kernels need relaxed SIMD, so elsewhere never called.)
 */
// @ts-ignore: decorator
@inline function q5kEncode(p: usize): void {
  if (!ASC_FEATURE_SIMD) {
    unreachable();
    return;
  }
  const h0 = v128.load(p, 12), h1 = v128.load(p, 28);
  const s0 = v128.load(p, 44), s1 = v128.load(p, 60), s2 = v128.load(p, 76), s3 = v128.load(p, 92);
  const s4 = v128.load(p, 108), s5 = v128.load(p, 124), s6 = v128.load(p, 140), s7 = v128.load(p, 156);
  q5kPair(p + 12, s0, s1, h0, h1, 0);
  q5kPair(p + 52, s2, s3, h0, h1, 2);
  q5kPair(p + 92, s4, s5, h0, h1, 4);
  q5kPair(p + 132, s6, s7, h0, h1, 6);
}

/**
 * One sub-block pair of q5kEncode: quant bytes qa (l < 16), qb (16 ≤ l < 32), qh vectors ha, hb, `bit` = 2c → 40
 * bytes at o.
 */
// @ts-ignore: decorator
@inline function q5kPair(o: usize, qa: v128, qb: v128, ha: v128, hb: v128, bit: i32): void {
  const m4 = i8x16.splat(15);
  const one = i8x16.splat(1);
  const sh = <u32>bit;
  // 16-bit shifts are exact here: the masks keep only bits that stay inside their byte.
  const aA = v128.or(v128.and(qa, m4), i16x8.shl(v128.and(i16x8.shr_u(ha, sh), one), 4));
  const aB = v128.or(v128.and(qb, m4), i16x8.shl(v128.and(i16x8.shr_u(hb, sh), one), 4));
  const bA = v128.or(hiNibbles(qa, m4), i16x8.shl(v128.and(i16x8.shr_u(ha, sh + 1), one), 4));
  const bB = v128.or(hiNibbles(qb, m4), i16x8.shl(v128.and(i16x8.shr_u(hb, sh + 1), one), 4));
  const seven = i8x16.splat(7);
  v128.store(o, v128.or(aA, i16x8.shl(v128.and(bA, seven), 5)));
  v128.store(o, v128.or(aB, i16x8.shl(v128.and(bB, seven), 5)), 16);
  const ta = v128.and(i16x8.shr_u(bA, 3), i8x16.splat(3));
  const tb = v128.and(i16x8.shr_u(bB, 3), i8x16.splat(3));
  store<u32>(o, i32x4.extract_lane(ta, 0) | (i32x4.extract_lane(ta, 1) << 2) | (i32x4.extract_lane(ta, 2) << 4) | (i32x4.extract_lane(ta, 3) << 6), 32);
  store<u32>(o, i32x4.extract_lane(tb, 0) | (i32x4.extract_lane(tb, 1) << 2) | (i32x4.extract_lane(tb, 2) << 4) | (i32x4.extract_lane(tb, 3) << 6), 36);
}

/**
 * 4×4 transpose of 32-bit words: [a.wj, b.wj, c.wj, d.wj] stored at o + 16j for j < 4 (scalar moves without SIMD;
 * those builds never store this layout, but the module exports the same functions in every build).
 */
// @ts-ignore: decorator
@inline function transpose4(o: usize, a: usize, b: usize, c: usize, d: usize, flip: u32): void {
  if (ASC_FEATURE_SIMD) {
    const f = i32x4.splat(flip);
    const va = v128.xor(v128.load(a), f), vb = v128.xor(v128.load(b), f);
    const vc = v128.xor(v128.load(c), f), vd = v128.xor(v128.load(d), f);
    const t0 = i32x4.shuffle(va, vb, 0, 4, 1, 5);
    const t1 = i32x4.shuffle(va, vb, 2, 6, 3, 7);
    const t2 = i32x4.shuffle(vc, vd, 0, 4, 1, 5);
    const t3 = i32x4.shuffle(vc, vd, 2, 6, 3, 7);
    v128.store(o, i64x2.shuffle(t0, t2, 0, 2));
    v128.store(o, i64x2.shuffle(t0, t2, 1, 3), 16);
    v128.store(o, i64x2.shuffle(t1, t3, 0, 2), 32);
    v128.store(o, i64x2.shuffle(t1, t3, 1, 3), 48);
  } else {
    for (let j: usize = 0; j < 4; j++) {
      store<u32>(o + (j << 4), load<u32>(a + (j << 2)) ^ flip);
      store<u32>(o + (j << 4), load<u32>(b + (j << 2)) ^ flip, 4);
      store<u32>(o + (j << 4), load<u32>(c + (j << 2)) ^ flip, 8);
      store<u32>(o + (j << 4), load<u32>(d + (j << 2)) ^ flip, 12);
    }
  }
}

/**
 * Rearranges `nRows` GGUF-layout rows of `rowBytes` bytes at `w` (blocks of `blockBytes`: `head` f16 fields, a body of
 * 32-bit words, `tail` f16 fields) into 4-row groups, in place, through `scratch` (4·rowBytes bytes). When
 * nRows % 4 != 0 the bytes after the last row, up to the group's end (reserved by the host), become its zero rows.
 * `flip` (0 or 0x80) is XORed into every body byte, the padding rows' included; `recode` 1 (Q5_0), 2 (Q6_K) or 3
 * (Q5_K) re-codes each block's body first (q5Encode, q6Encode, q5kEncode). With `check` = 1 every head and tail field
 * (the f16 scales of every rows4 type) is tested for Inf/NaN (exponent bits all ones) on the way — the load's
 * non-finite scan fused into this pass over the bytes — and the result is the GGUF-order index (row · blocks per row
 * + block) of the first block holding one, else -1; with `check` = 0 it is -1.
 */
export function interleave_rows4(
  w: usize, nRows: i32, rowBytes: i32, blockBytes: i32, head: i32, tail: i32, scratch: usize, flip: i32, recode: i32,
  check: i32,
): i32 {
  const f4 = <u32>(flip & 0xff) * 0x01010101;
  const rb = <usize>rowBytes;
  const bb = <usize>blockBytes;
  const nb = rb / bb;
  const hb = <usize>head << 1; // head bytes of a GGUF block
  const words = (bb - hb - (<usize>tail << 1)) >> 2; // body words of a GGUF block
  const fields = <usize>(head + tail);
  let first: i32 = -1;
  for (let r = 0; r < nRows; r += 4) {
    const base = w + <usize>r * rb;
    const have = <usize>min(4, nRows - r);
    memory.copy(scratch, base, have * rb);
    if (have < 4) memory.fill(scratch + have * rb, 0, (4 - have) * rb);
    for (let b: usize = 0; b < nb; b++) {
      const o = base + b * (bb << 2);
      const p0 = scratch + b * bb;
      const p1 = p0 + rb, p2 = p1 + rb, p3 = p2 + rb;
      if (check != 0) {
        // (v & 0x7c00) + 0x400 reaches 0x8000 only when the exponent bits are all ones (Inf/NaN).
        let bad: u32 = 0;
        for (let f: usize = 0; f < fields; f++) {
          const at = f < <usize>head ? f << 1 : hb + (words << 2) + ((f - <usize>head) << 1);
          bad |= ((<u32>load<u16>(p0 + at) & 0x7c00) + 0x400) | ((<u32>load<u16>(p1 + at) & 0x7c00) + 0x400);
          bad |= ((<u32>load<u16>(p2 + at) & 0x7c00) + 0x400) | ((<u32>load<u16>(p3 + at) & 0x7c00) + 0x400);
        }
        if ((bad & 0x8000) != 0) first = firstBadRow(first, p0, rb, <i32>have, fields, <usize>head, hb + (words << 2), r, <i32>nb, <i32>b);
      }
      if (recode == 1) {
        q5Encode(p0 + hb);
        q5Encode(p1 + hb);
        q5Encode(p2 + hb);
        q5Encode(p3 + hb);
      } else if (recode == 2) {
        q6Encode(p0 + hb);
        q6Encode(p1 + hb);
        q6Encode(p2 + hb);
        q6Encode(p3 + hb);
      } else if (recode == 3) {
        q5kEncode(p0 + hb);
        q5kEncode(p1 + hb);
        q5kEncode(p2 + hb);
        q5kEncode(p3 + hb);
      }
      for (let f: usize = 0; f < fields; f++) {
        const at = f < <usize>head ? f << 1 : hb + (words << 2) + ((f - <usize>head) << 1); // field f in a GGUF block
        store<u16>(o + (f << 3), load<u16>(p0 + at));
        store<u16>(o + (f << 3), load<u16>(p1 + at), 2);
        store<u16>(o + (f << 3), load<u16>(p2 + at), 4);
        store<u16>(o + (f << 3), load<u16>(p3 + at), 6);
      }
      const body = o + (fields << 3);
      let j: usize = 0;
      for (; j + 4 <= words; j += 4) {
        const q = hb + (j << 2);
        transpose4(body + (j << 4), p0 + q, p1 + q, p2 + q, p3 + q, f4);
      }
      for (; j < words; j++) {
        const q = hb + (j << 2);
        store<u32>(body + (j << 4), load<u32>(p0 + q) ^ f4);
        store<u32>(body + (j << 4), load<u32>(p1 + q) ^ f4, 4);
        store<u32>(body + (j << 4), load<u32>(p2 + q) ^ f4, 8);
        store<u32>(body + (j << 4), load<u32>(p3 + q) ^ f4, 12);
      }
    }
  }
  return first;
}

/**
 * The smaller of `first` (-1: none yet) and the GGUF-order block index of the first of the `have` rows at `p0` (`rb`
 * bytes apart, group rows `r` …) whose block `b` holds a non-finite f16 field (`head` fields at its start, the rest
 * from byte `tailAt`). The rare path of interleave_rows4's check.
 */
function firstBadRow(
  first: i32, p0: usize, rb: usize, have: i32, fields: usize, head: usize, tailAt: usize, r: i32, nb: i32, b: i32,
): i32 {
  for (let i = 0; i < have; i++) {
    const p = p0 + <usize>i * rb;
    for (let f: usize = 0; f < fields; f++) {
      const at = f < head ? f << 1 : tailAt + ((f - head) << 1);
      if ((<u32>load<u16>(p + at) & 0x7c00) == 0x7c00) {
        const index = (r + i) * nb + b;
        return first < 0 || index < first ? index : first;
      }
    }
  }
  return first;
}
