/**
 * The WASM backend's 4-row layout (relaxed-SIMD builds) for the types whose registry entry has `wasm.rows4` (Q4_0,
 * Q5_0, Q8_0, Q4_K, Q5_K, Q6_K: blocks of f16 fields at the start or end around a body of 32-bit words): rows 4g … 4g + 3 form group
 * g, stored in the span those four rows take in the GGUF file (a row count off a multiple of 4 is padded with zero
 * rows). Block b of a group takes 4·blockBytes bytes: each f16 field of the four rows, then 16-byte chunks, chunk j =
 * body bytes 4j … 4j + 3 of rows 0, 1, 2, 3 — lanes = rows, as llama.cpp's CPU repack kernels store them, so one relaxed dot of a chunk against four
 * activation bytes splatted to every lane serves four rows (wasm/assembly/gemv-stored-rows4.ts), at one token and
 * at many alike: prefill and batched choices need no per-call packing. Same bytes as the GGUF rows but the padding;
 * signed quants (Q8_0, registry `rows4.signFlip`) are stored with their sign bit flipped (see
 * wasm/assembly/gemv-q8-rows4.ts).
 * Uploads copy the GGUF rows into memory and rearrange them there (wasm/assembly/rows4-layout.ts).
 */

/** Rows stored for a matrix of `nRows` rows in 4-row groups (padded to a multiple of 4). */
export function rows4StoredRows(nRows: number): number {
  return (nRows + 3) & ~3;
}

/**
 * The block shape of a type stored in 4-row groups (registry `wasm.rows4`): its bytes and how many f16 fields open
 * (`head`) and close (`tail`) a GGUF block; the rest is the body, whole 32-bit words.
 */
export interface Rows4Block {
  readonly blockBytes: number;
  readonly head: number;
  readonly tail: number;
  /** XORed into every body byte as stored (0x80 for signed quants, registry `rows4.signFlip`; else 0). */
  readonly flip: number;
  /** Bodies stored re-coded (registry `rows4.recode`): 1 Q5_0 (q5Body), 2 Q6_K (q6Body), 3 Q5_K (q5kBody); 0 as in the GGUF. */
  readonly recode: 0 | 1 | 2 | 3;
}

/**
 * A Q5_0 block body (GGUF: u32 qh, then qs[16]) as the 4-row layout stores it, quants q_e = nibble | 5th bit << 4:
 * bytes 4m + i (m, i < 4) = q_{4m+i} | (q_{16+4m+i} & 7) << 5, bytes 16 + i = Σ_m (q_{16+4m+i} >> 3) << 2m, so
 * wasm/assembly/gemv-q5-rows4.ts takes quants 0…15 with one mask and 16…31 with two shifts, two masks and an or.
 * The reference for the kernels' SIMD q5Encode; `decode` undoes it.
 */
function q5Body(body: Uint8Array, decode: boolean): Uint8Array {
  const q = new Uint8Array(32);
  const out = new Uint8Array(20);
  if (!decode) {
    const qh = (body[0]! | (body[1]! << 8) | (body[2]! << 16) | (body[3]! << 24)) >>> 0;
    for (let j = 0; j < 16; j++) {
      q[j] = (body[4 + j]! & 15) | (((qh >>> j) & 1) << 4);
      q[j + 16] = (body[4 + j]! >> 4) | (((qh >>> (j + 16)) & 1) << 4);
    }
    for (let j = 0; j < 16; j++) {
      out[j] = q[j]! | ((q[j + 16]! & 7) << 5);
      out[16 + (j & 3)]! |= (q[j + 16]! >> 3) << (2 * (j >> 2));
    }
    return out;
  }
  for (let j = 0; j < 16; j++) {
    q[j] = body[j]! & 31;
    q[j + 16] = (body[j]! >> 5) | (((body[16 + (j & 3)]! >> (2 * (j >> 2))) & 3) << 3);
  }
  let qh = 0;
  for (let e = 0; e < 32; e++) qh |= (q[e]! >> 4) << e;
  out.set([qh & 0xff, (qh >>> 8) & 0xff, (qh >>> 16) & 0xff, qh >>> 24]);
  for (let j = 0; j < 16; j++) out[4 + j] = (q[j]! & 15) | ((q[j + 16]! & 15) << 4);
  return out;
}

/**
 * A Q6_K super-block body (GGUF: ql[128], qh[64], scales[16]) as the 4-row layout stores it: activation block b
 * (elements 32b …, 6-bit quants q_l) in bytes 24b … 24b + 23, half s (l = 16s …) in bytes 24b + 12s + 4k + i (k < 3,
 * i < 4) = q_{16s+4k+i} | ((q_{16s+12+i} >> 2k) & 3) << 6 — and the scales in bytes 192 … 207, so
 * wasm/assembly/gemv-q6-k-rows4.ts takes three chunks of four quants × four rows with one mask each and the fourth
 * from their top bits. The reference for the kernels' SIMD q6Encode; `decode` undoes it.
 */
function q6Body(body: Uint8Array, decode: boolean): Uint8Array {
  const q = new Uint8Array(256);
  const out = new Uint8Array(208);
  out.set(body.subarray(192, 208), 192);
  // GGUF: element 128n + 32g + l is ql[64n + 32(g & 1) + l] (high nibble for g ≥ 2) | (qh[32n + l] >> 2g & 3) << 4.
  const gguf = (e: number): [number, number, number] => {
    const [n, g, l] = [e >> 7, (e >> 5) & 3, e & 31];
    return [64 * n + 32 * (g & 1) + l, 4 * (g >> 1), 128 + 32 * n + l];
  };
  // Coded: the byte base of element e's half block and its index j in it.
  const coded = (e: number): [number, number] => [24 * (e >> 5) + 12 * ((e >> 4) & 1), e & 15];
  for (let e = 0; e < 256; e++) {
    if (!decode) {
      const [nib, sh, two] = gguf(e);
      q[e] = ((body[nib]! >> sh) & 15) | (((body[two]! >> (2 * ((e >> 5) & 3))) & 3) << 4);
    } else {
      const [base, j] = coded(e);
      q[e] = j < 12 ? body[base + j]! & 63 : 0;
      for (let k = 0; j >= 12 && k < 3; k++) q[e]! |= ((body[base + 4 * k + j - 12]! >> 6) & 3) << (2 * k);
    }
  }
  for (let e = 0; e < 256; e++) {
    if (decode) {
      const [nib, sh, two] = gguf(e);
      out[nib]! |= (q[e]! & 15) << sh;
      out[two]! |= (q[e]! >> 4) << (2 * ((e >> 5) & 3));
    } else {
      const [base, j] = coded(e);
      if (j < 12) out[base + j]! |= q[e]!;
      for (let k = 0; j >= 12 && k < 3; k++) out[base + 4 * k + j - 12]! |= ((q[e]! >> (2 * k)) & 3) << 6;
    }
  }
  return out;
}

/**
 * A Q5_K super-block body (GGUF: scales[12], qh[32], qs[128]) as the 4-row layout stores it: the scales as they are,
 * then per sub-block pair c (sub-blocks 2c, 2c + 1; 5-bit quants a_l, b_l = nibble | bit 2c or 2c + 1 of qh[l] << 4)
 * 40 bytes from 12 + 40c — bytes l = a_l | (b_l & 7) << 5 (l < 32), bytes 32 + 4t + i = Σ_{m<4} (b_{16t+4m+i} >> 3)
 * << 2m — so wasm/assembly/gemv-q5-k-rows4.ts takes a's with one mask and b's at constant shifts. The reference for
 * the kernels' SIMD q5kEncode; `decode` undoes it.
 */
function q5kBody(body: Uint8Array, decode: boolean): Uint8Array {
  const out = new Uint8Array(172);
  out.set(body.subarray(0, 12));
  for (let c = 0; c < 4; c++) {
    const p = 12 + 40 * c;
    for (let l = 0; l < 32; l++) {
      const [t, m, i] = [l >> 4, (l >> 2) & 3, l & 3];
      const top = 32 + 4 * t + i; // byte of b_l's top two bits, at bits 2m
      if (!decode) {
        const qs = body[44 + 32 * c + l]!;
        const qh = body[12 + l]!;
        const a = (qs & 15) | (((qh >> (2 * c)) & 1) << 4);
        const b = (qs >> 4) | (((qh >> (2 * c + 1)) & 1) << 4);
        out[p + l] = a | ((b & 7) << 5);
        out[p + top]! |= (b >> 3) << (2 * m);
      } else {
        const a = body[p + l]! & 31;
        const b = (body[p + l]! >> 5) | (((body[p + top]! >> (2 * m)) & 3) << 3);
        out[44 + 32 * c + l] = (a & 15) | ((b & 15) << 4);
        out[12 + l]! |= ((a >> 4) << (2 * c)) | ((b >> 4) << (2 * c + 1));
      }
    }
  }
  return out;
}

/** The GGUF block at src[from …] with its body re-coded (or back, `decode`) as `block.recode` says. */
function withCodedBody(src: Uint8Array, from: number, block: Rows4Block, decode: boolean): Uint8Array {
  const b = src.slice(from, from + block.blockBytes);
  const o = 2 * block.head;
  if (block.recode === 1) b.set(q5Body(b.subarray(o, o + 20), decode), o);
  if (block.recode === 2) b.set(q6Body(b.subarray(o, o + 208), decode), o);
  if (block.recode === 3) b.set(q5kBody(b.subarray(o, o + 172), decode), o);
  return b;
}

/**
 * Writes the GGUF-layout matrix `src` ([nRows, rowBytes], blocks shaped `block`) into `dst`
 * (rows4StoredRows(nRows)·rowBytes bytes) in 4-row groups; padding rows are zeros, `block.flip` is XORed into every
 * body byte (the padding rows' included), Q5_0, Q6_K and Q5_K bodies re-coded (`block.recode`). The reference for the
 * kernels' in-place `interleave_rows4`, which uploads use.
 */
export function interleaveRows4(
  src: Uint8Array,
  dst: Uint8Array,
  nRows: number,
  rowBytes: number,
  block: Rows4Block,
): void {
  const bb = block.blockBytes;
  const nb = rowBytes / bb;
  for (let r = 0; r < rows4StoredRows(nRows); r++) {
    for (let b = 0; b < nb; b++) {
      const gguf = r < nRows ? withCodedBody(src, r * rowBytes + b * bb, block, false) : null;
      const to = rows4BlockAt(r, b, rowBytes, bb);
      for (let i = 0; i < bb; i++) {
        const v = gguf ? gguf[i]! : 0;
        dst[to + rows4ByteOffset(r, i, block)] = isBody(i, block) ? v ^ block.flip : v;
      }
    }
  }
}

/** Byte offset of row r's block b's group block (4·blockBytes bytes) from the matrix start. */
function rows4BlockAt(r: number, b: number, rowBytes: number, blockBytes: number): number {
  return (r >> 2) * 4 * rowBytes + b * 4 * blockBytes;
}

/** Whether byte i of a GGUF block is a body byte (not one of the f16 fields). */
function isBody(i: number, block: Rows4Block): boolean {
  return i >= 2 * block.head && i < block.blockBytes - 2 * block.tail;
}

/**
 * Where byte i of a GGUF block of row r lies inside its group block: the f16 fields first (field f of the four rows
 * at 8f, head fields then tail fields), then the body's chunks (word j of the four rows at 16j).
 */
function rows4ByteOffset(r: number, i: number, block: Rows4Block): number {
  const lane = r & 3;
  const headBytes = 2 * block.head;
  const bodyEnd = block.blockBytes - 2 * block.tail;
  if (i < headBytes) return 8 * (i >> 1) + 2 * lane + (i & 1);
  if (i >= bodyEnd) return 8 * (block.head + ((i - bodyEnd) >> 1)) + 2 * lane + (i & 1);
  const q = i - headBytes;
  return 8 * (block.head + block.tail) + 16 * (q >> 2) + 4 * lane + (q & 3);
}

/**
 * Copies row r of a 4-row-group matrix (starting at byte `at` of `mem`) back into GGUF layout: `out` gets its
 * rowBytes bytes (body bytes unflipped, re-coded bodies decoded). A byte loop: it runs once per embedded token.
 */
export function readRows4Row(
  mem: Uint8Array,
  at: number,
  r: number,
  rowBytes: number,
  block: Rows4Block,
  out: Uint8Array,
): void {
  const bb = block.blockBytes;
  const nb = rowBytes / bb;
  for (let b = 0; b < nb; b++) {
    const g = at + rows4BlockAt(r, b, rowBytes, bb);
    for (let i = 0; i < bb; i++) {
      const v = mem[g + rows4ByteOffset(r, i, block)]!;
      out[b * bb + i] = isBody(i, block) ? v ^ block.flip : v;
    }
    if (block.recode) out.set(withCodedBody(out, b * bb, block, true), b * bb);
  }
}
