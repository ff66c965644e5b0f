/**
 * The WASM backend's 4-row layout (relaxed-SIMD builds) for the types whose registry entry has `wasm.rows4` (Q4_0,
 * Q8_0: blocks of one f16 scale then 16·m quant bytes): rows 4g … 4g + 3 form group g, stored in the span those four
 * rows take in the GGUF file (a row count off a multiple of 4 is padded with zero rows). Block b of a group takes
 * 4·blockBytes bytes: the four rows' f16 scales, then 16-byte chunks, chunk j = quant bytes 4j … 4j + 3 of rows
 * 0, 1, 2, 3 — lanes = rows, as llama.cpp's CPU repack kernels store them, so one relaxed dot of a chunk against four
 * activation bytes splatted to every lane serves four rows (wasm/assembly/gemv-stored-rows4.ts), at one token and
 * at many alike: prefill and batched choices need no per-call packing. Same bytes as the GGUF rows but the padding
 * (signed quants, Q8_0, with their sign bit flipped: `flip` 0x80, see wasm/assembly/gemv-q8-rows4.ts).
 * Uploads copy the GGUF rows into memory and rearrange them there (wasm/assembly/rows4-layout.ts).
 */

/** Rows stored for a matrix of `nRows` rows in 4-row groups (padded to a multiple of 4). */
export function rows4StoredRows(nRows: number): number {
  return (nRows + 3) & ~3;
}

/**
 * Writes the GGUF-layout matrix `src` ([nRows, rowBytes], blocks of `blockBytes`) into `dst`
 * (rows4StoredRows(nRows)·rowBytes bytes) in 4-row groups; padding rows are zeros; `flip` is XORed into every quant
 * byte (padding rows' included). The reference for the kernels' in-place `interleave_rows4`, which uploads use.
 */
export function interleaveRows4(
  src: Uint8Array,
  dst: Uint8Array,
  nRows: number,
  rowBytes: number,
  blockBytes: number,
  flip = 0,
): void {
  const nb = rowBytes / blockBytes;
  for (let r = 0; r < rows4StoredRows(nRows); r++) {
    for (let b = 0; b < nb; b++) {
      const from = r * rowBytes + b * blockBytes;
      const to = rows4BlockAt(r, b, rowBytes, blockBytes);
      for (let i = 0; i < blockBytes; i++) {
        const v = r < nRows ? src[from + i]! : 0;
        dst[to + rows4ByteOffset(r, i)] = i < 2 ? v : v ^ flip;
      }
    }
  }
}

/** Byte offset of row r's block b's group block (4·blockBytes bytes) from the matrix start. */
function rows4BlockAt(r: number, b: number, rowBytes: number, blockBytes: number): number {
  return (r >> 2) * 4 * rowBytes + b * 4 * blockBytes;
}

/** Where byte i of a GGUF block of row r lies inside its group block: scale bytes first, then the chunk lanes. */
function rows4ByteOffset(r: number, i: number): number {
  const lane = r & 3;
  if (i < 2) return 2 * lane + i;
  const q = i - 2;
  return 8 + 16 * (q >> 2) + 4 * lane + (q & 3);
}

/**
 * Copies row r of a 4-row-group matrix (starting at byte `at` of `mem`) back into GGUF layout: `out` gets its
 * rowBytes bytes (quants XORed with `flip` again). A byte loop, no views: it runs once per embedded token.
 */
export function readRows4Row(
  mem: Uint8Array,
  at: number,
  r: number,
  rowBytes: number,
  blockBytes: number,
  out: Uint8Array,
  flip = 0,
): void {
  const nb = rowBytes / blockBytes;
  const lane = r & 3;
  let to = 0;
  for (let b = 0; b < nb; b++) {
    const g = at + rows4BlockAt(r, b, rowBytes, blockBytes);
    out[to++] = mem[g + 2 * lane];
    out[to++] = mem[g + 2 * lane + 1];
    for (let q = 0; q < blockBytes - 2; q += 4) {
      const c = g + 8 + 4 * q + 4 * lane;
      out[to++] = mem[c]! ^ flip;
      out[to++] = mem[c + 1]! ^ flip;
      out[to++] = mem[c + 2]! ^ flip;
      out[to++] = mem[c + 3]! ^ flip;
    }
  }
}
