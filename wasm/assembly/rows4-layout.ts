/**
 * The 4-row weight layout of the relaxed-SIMD builds (src/backend/wasm/rows4-layout.ts), for block types made of f16
 * fields at the block's start (`head` of them: Q4_0 1, Q4_K 2) or end (`tail`: Q6_K 1) and a body of 32-bit words:
 * rows 4g … 4g + 3 form group g, stored where those four rows lie in the GGUF file (a row count off a multiple of 4
 * is padded with zero rows). Block b of a group takes 4·blockBytes bytes: each f16 field of the four rows (8 bytes a
 * field, head fields then tail fields), then 16-byte chunks, chunk j holding body word j (bytes 4j … 4j + 3) of rows
 * 0, 1, 2, 3 — the "lanes = rows" layout of llama.cpp's CPU repack kernels. A kernel splats four activation bytes to
 * every lane and one dot serves four rows (gemv-stored-rows4.ts, gemv-k-rows4.ts). Signed quants (Q8_0) are stored
 * with their sign bit flipped (`flip` 0x80: u = w + 128, 0…255; gemv-q8-rows4.ts reads its two nibbles), the f16
 * fields as they are. Q5_0 (`q5`) has its first body word, the 5th bits, re-ordered per row first (q5BitOrder).
 */

/** Spreads the 4 bits of n to bits 0, 8, 16, 24 (the four shifted copies of n do not overlap: no carries). */
// @ts-ignore: decorator
@inline function spreadNibble(n: u32): u32 {
  return (n * 0x00204081) & 0x01010101;
}

/**
 * Q5_0's 5th bits (bit e = element e's, GGUF's qh) re-ordered for gemv-q5-rows4.ts: element 4j + i's bit goes to
 * bit 8i + j, element 16 + 4j + i's to 8i + 4 + j (i, j < 4), so byte i of the word holds the bits of the quants in
 * byte i of every nibble chunk. GGUF byte b's bit t lands at 8·(t & 3) + (t >> 2) + 2b.
 */
// @ts-ignore: decorator
@inline function q5BitOrder(qh: u32): u32 {
  let r: u32 = 0;
  for (let b: u32 = 0; b < 4; b++) {
    const x = (qh >> (b << 3)) & 0xff;
    r |= (spreadNibble(x & 15) | (spreadNibble(x >> 4) << 1)) << (b << 1);
  }
  return r;
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
 * `flip` (0 or 0x80) is XORed into every body byte, the padding rows' included; `q5` (1 for Q5_0) re-orders each
 * block's first body word, its 5th bits, by q5BitOrder.
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
        store<u32>(p0 + hb, q5BitOrder(load<u32>(p0 + hb)));
        store<u32>(p1 + hb, q5BitOrder(load<u32>(p1 + hb)));
        store<u32>(p2 + hb, q5BitOrder(load<u32>(p2 + hb)));
        store<u32>(p3 + hb, q5BitOrder(load<u32>(p3 + hb)));
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
