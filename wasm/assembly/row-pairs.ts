/**
 * The row-pair weight layout (src/backend/wasm/row-pairs.ts): rows 2p and 2p + 1 stored block by block alternately,
 * an odd last row followed by a zero row. `interleave_row_pairs` converts a matrix uploaded in GGUF layout in place,
 * one pair at a time through `scratch` (2·rowBytes bytes), a few 16-byte (or 8-byte) moves per block: a JavaScript
 * loop of per-block `set` calls took 2.4 s for a 335 MiB model.
 */

/** Copies `n` bytes (n ≥ 16) from `src` to `dst` (not overlapping): 16- (or 8-) byte moves, the last one overlapping. */
// @ts-ignore: decorator
@inline function copyBlock(dst: usize, src: usize, n: usize): void {
  if (ASC_FEATURE_SIMD) {
    for (let i: usize = 0; i + 16 <= n; i += 16) v128.store(dst + i, v128.load(src + i));
    v128.store(dst + n - 16, v128.load(src + n - 16));
  } else {
    for (let i: usize = 0; i + 8 <= n; i += 8) store<u64>(dst + i, load<u64>(src + i));
    store<u64>(dst + n - 8, load<u64>(src + n - 8));
  }
}

/**
 * Rearranges `nRows` GGUF-layout rows of `rowBytes` bytes at `w` into row pairs of `blockBytes`-byte blocks, in place;
 * for an odd count, the bytes after the last row (rowBytes of them, which must be reserved) become its zero partner.
 */
export function interleave_row_pairs(w: usize, nRows: i32, rowBytes: i32, blockBytes: i32, scratch: usize): void {
  const rb = <usize>rowBytes;
  const bb = <usize>blockBytes;
  const nb = rb / bb;
  for (let r = 0; r < nRows; r += 2) {
    const base = w + <usize>r * rb;
    const hasB = r + 1 < nRows;
    memory.copy(scratch, base, hasB ? rb << 1 : rb);
    if (!hasB) memory.fill(scratch + rb, 0, rb);
    for (let b: usize = 0; b < nb; b++) {
      copyBlock(base + (b << 1) * bb, scratch + b * bb, bb);
      copyBlock(base + ((b << 1) + 1) * bb, scratch + rb + b * bb, bb);
    }
  }
}
