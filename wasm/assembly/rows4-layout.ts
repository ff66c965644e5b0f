/**
 * The 4-row weight layout of the relaxed-SIMD builds (src/backend/wasm/rows4-layout.ts), for block types whose block
 * is one f16 scale then a multiple of 16 quant bytes (Q4_0: 18-byte blocks, Q8_0: 34): rows 4g … 4g + 3 form group g,
 * stored where those four rows lie in the GGUF file (a row count off a multiple of 4 is padded with zero rows). Block b
 * of a group takes 4·blockBytes bytes: the four rows' f16 scales (8 bytes), then 16-byte chunks, chunk j holding quant
 * bytes 4j … 4j + 3 of rows 0, 1, 2, 3 — the "lanes = rows" layout of llama.cpp's CPU repack kernels. A kernel splats
 * four activation bytes to every lane and one dot serves four rows (wasm/assembly/gemv-stored-rows4.ts). Signed
 * quants (Q8_0) are stored with their sign bit flipped (`flip` 0x80: u = w + 128, 0…255; gemv-q8-rows4.ts reads
 * its two nibbles), the scales as they are.
 */

/**
 * 4×4 transpose of 32-bit words: [a.wj, b.wj, c.wj, d.wj] ^ flip stored at o + 16j for j < 4 (flip: 0 or 0x80808080;
 * scalar moves without SIMD; those builds never store this layout, but the module exports the same functions in
 * every build).
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
 * Rearranges `nRows` GGUF-layout rows of `rowBytes` bytes at `w` (blocks of `blockBytes`: f16 scale + 16·m quant
 * bytes) into 4-row groups, in place, through `scratch` (4·rowBytes bytes). When nRows % 4 != 0 the bytes after the
 * last row, up to the group's end (reserved by the host), become its zero rows. `flip` (0 or 0x80) is XORed into
 * every quant byte, the padding rows' included.
 */
export function interleave_rows4(w: usize, nRows: i32, rowBytes: i32, blockBytes: i32, scratch: usize, flip: i32): void {
  const f4 = <u32>(flip & 0xff) * 0x01010101;
  const rb = <usize>rowBytes;
  const bb = <usize>blockBytes;
  const nb = rb / bb;
  for (let r = 0; r < nRows; r += 4) {
    const base = w + <usize>r * rb;
    const have = <usize>min(4, nRows - r);
    memory.copy(scratch, base, have * rb);
    if (have < 4) memory.fill(scratch + have * rb, 0, (4 - have) * rb);
    for (let b: usize = 0; b < nb; b++) {
      const o = base + b * (bb << 2);
      const p0 = scratch + b * bb;
      const p1 = p0 + rb, p2 = p1 + rb, p3 = p2 + rb;
      store<u16>(o, load<u16>(p0));
      store<u16>(o, load<u16>(p1), 2);
      store<u16>(o, load<u16>(p2), 4);
      store<u16>(o, load<u16>(p3), 6);
      for (let q: usize = 2; q < bb; q += 16) transpose4(o + 8 + ((q - 2) << 2), p0 + q, p1 + q, p2 + q, p3 + q, f4);
    }
  }
}
