/**
 * The 4-row weight layout of the relaxed-SIMD builds (src/backend/wasm/rows4-layout.ts), for block types made of f16
 * fields at the block's start (`head` of them: Q4_0 1, Q4_K 2) or end (`tail`: Q6_K 1) and a body of 32-bit words:
 * rows 4g … 4g + 3 form group g, stored where those four rows lie in the GGUF file (a row count off a multiple of 4
 * is padded with zero rows). Block b of a group takes 4·blockBytes bytes: each f16 field of the four rows (8 bytes a
 * field, head fields then tail fields), then 16-byte chunks, chunk j holding body word j (bytes 4j … 4j + 3) of rows
 * 0, 1, 2, 3 — the "lanes = rows" layout of llama.cpp's CPU repack kernels. A kernel splats four activation bytes to
 * every lane and one dot serves four rows (gemv-stored-rows4.ts, gemv-k-rows4.ts). Signed quants (Q8_0) are stored
 * with their sign bit flipped (`flip` 0x80: u = w + 128, 0…255; gemv-q8-rows4.ts reads its two nibbles), the f16
 * fields as they are. Q5_0 (`q5`) has each row's block body re-coded first (q5Encode).
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
 * `flip` (0 or 0x80) is XORed into every body byte, the padding rows' included; `q5` (1 for Q5_0) re-codes each
 * block's body (q5Encode) before.
 */
export function interleave_rows4(
  w: usize, nRows: i32, rowBytes: i32, blockBytes: i32, head: i32, tail: i32, scratch: usize, flip: i32, q5: i32,
): void {
  const f4 = <u32>(flip & 0xff) * 0x01010101;
  const rb = <usize>rowBytes;
  const bb = <usize>blockBytes;
  const nb = rb / bb;
  const hb = <usize>head << 1; // head bytes of a GGUF block
  const words = (bb - hb - (<usize>tail << 1)) >> 2; // body words of a GGUF block
  const fields = <usize>(head + tail);
  for (let r = 0; r < nRows; r += 4) {
    const base = w + <usize>r * rb;
    const have = <usize>min(4, nRows - r);
    memory.copy(scratch, base, have * rb);
    if (have < 4) memory.fill(scratch + have * rb, 0, (4 - have) * rb);
    for (let b: usize = 0; b < nb; b++) {
      const o = base + b * (bb << 2);
      const p0 = scratch + b * bb;
      const p1 = p0 + rb, p2 = p1 + rb, p3 = p2 + rb;
      if (q5 != 0) {
        q5Encode(p0 + hb);
        q5Encode(p1 + hb);
        q5Encode(p2 + hb);
        q5Encode(p3 + hb);
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
}
