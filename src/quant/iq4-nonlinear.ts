/**
 * Shared by IQ4_NL and IQ4_XS: the 16-entry non-linear codebook (ggml `kvalues_iq4nl`) and ggml's reference
 * quantizer for it (`quantize_row_iq4_nl_impl` without importance weights), with every f32 operation rounded as C does.
 * A super-block has one or eight 32-element sub-blocks; with eight, sub-block scales are 6-bit under an f16 scale.
 */

import { writeF16 } from './half.js';
import { nearestInt, signedAbsMax } from './rounding.js';

const fround = Math.fround;

/** The IQ4 codebook: 4-bit index → int8 level (ggml `kvalues_iq4nl`). */
export const KVALUES_IQ4NL: Int8Array = Int8Array.from([
  -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
]);

const GROUP_MAX_EPS = fround(1e-15);

/** ggml `best_index_int8` over the 16 sorted codebook levels: the level nearest `x` (branch-free binary search). */
function bestIndexIq4(x: number): number {
  const x2 = fround(x + x);
  const v = KVALUES_IQ4NL;
  let idx = 0;
  for (let step = 8; step > 0; step >>= 1) {
    const j = idx + step;
    if (x2 >= v[j - 1]! + v[j]!) idx = j;
  }
  return idx;
}

/** Where one super-block's fields go in the destination bytes. */
export interface Iq4BlockLayout {
  /** Elements per super-block: 32 (IQ4_NL) or 256 (IQ4_XS). */
  readonly superBlockSize: number;
  /** Byte offset of the f16 d. */
  readonly dOffset: number;
  /** Byte offset of the u16 scales_h (IQ4_XS only, else −1). */
  readonly scalesHOffset: number;
  /** Byte offset of the u8 scales_l[4] (IQ4_XS only, else −1). */
  readonly scalesLOffset: number;
  /** Byte offset of the packed nibbles (superBlockSize/2 bytes). */
  readonly qsOffset: number;
  /** ggml's `ntry`: −1 for IQ4_NL's reference, 7 for IQ4_XS's. */
  readonly ntry: number;
}

/** Scratch reused across calls: L is kept between blocks exactly as ggml's caller-owned array is. */
export interface Iq4Scratch {
  readonly L: Uint8Array; // (superBlockSize) codebook indices
  readonly scales: Float32Array; // (superBlockSize/32) sub-block scales
}

/** Allocates scratch for one row's quantization. */
export function makeIq4Scratch(superBlockSize: number): Iq4Scratch {
  return { L: new Uint8Array(superBlockSize), scales: new Float32Array(superBlockSize / 32) };
}

/** Quantizes `x[xOff .. xOff+superBlockSize)` into one block at `dst[base ..]` per `layout`. */
export function quantizeIq4Block(
  x: Float32Array,
  xOff: number,
  dst: Uint8Array,
  base: number,
  layout: Iq4BlockLayout,
  scratch: Iq4Scratch,
): void {
  const { superBlockSize, ntry } = layout;
  const { L, scales } = scratch;
  const v = KVALUES_IQ4NL;
  const nsub = superBlockSize / 32;
  dst.fill(0, base + layout.qsOffset, base + layout.qsOffset + superBlockSize / 2);
  writeF16(dst, base + layout.dOffset, 0);
  let maxScale = 0;
  let amaxScale = 0;
  for (let ib = 0; ib < nsub; ib++) {
    const xb = xOff + ib * 32;
    const max = signedAbsMax(x, xb, 32);
    if (Math.abs(max) < GROUP_MAX_EPS) {
      scales[ib] = 0;
      continue;
    }
    let d = ntry > 0 ? fround(-max / v[0]!) : fround(max / v[0]!);
    let id = fround(1 / d);
    let sumqx = 0;
    let sumq2 = 0;
    for (let j = 0; j < 32; j++) {
      const xv = x[xb + j]!;
      const l = bestIndexIq4(fround(id * xv));
      L[ib * 32 + j] = l;
      const q = v[l]!;
      const w = fround(xv * xv);
      sumqx = fround(sumqx + fround(fround(w * q) * xv));
      sumq2 = fround(sumq2 + fround(fround(w * q) * q));
    }
    d = sumq2 > 0 ? fround(sumqx / sumq2) : 0;
    let best = fround(d * sumqx);
    for (let itry = -ntry; itry <= ntry; itry++) {
      id = fround((itry + v[0]!) / max);
      sumqx = 0;
      sumq2 = 0;
      for (let j = 0; j < 32; j++) {
        const xv = x[xb + j]!;
        const q = v[bestIndexIq4(fround(id * xv))]!;
        const w = fround(xv * xv);
        sumqx = fround(sumqx + fround(fround(w * q) * xv));
        sumq2 = fround(sumq2 + fround(fround(w * q) * q));
      }
      if (sumq2 > 0 && fround(sumqx * sumqx) > fround(best * sumq2)) {
        d = fround(sumqx / sumq2);
        best = fround(d * sumqx);
      }
    }
    scales[ib] = d;
    if (Math.abs(d) > amaxScale) {
      amaxScale = Math.abs(d);
      maxScale = d;
    }
  }

  if (nsub > 1) {
    const d = fround(-maxScale / 32);
    writeF16(dst, base + layout.dOffset, d);
    const id = d !== 0 ? fround(1 / d) : 0;
    let scalesH = 0;
    const sl = base + layout.scalesLOffset;
    for (let ib = 0; ib < nsub; ib++) {
      let l = nearestInt(fround(id * scales[ib]!));
      l = Math.max(-32, Math.min(31, l));
      const dl = fround(d * l);
      const idl = dl !== 0 ? fround(1 / dl) : 0;
      for (let j = 0; j < 32; j++) L[ib * 32 + j] = bestIndexIq4(fround(idl * x[xOff + ib * 32 + j]!));
      l += 32;
      const lo = l & 0xf;
      if (ib % 2 === 0) dst[sl + (ib >> 1)] = lo;
      else dst[sl + (ib >> 1)]! |= lo << 4;
      scalesH |= (l >> 4) << (2 * (ib % 8));
    }
    dst[base + layout.scalesHOffset] = scalesH & 0xff;
    dst[base + layout.scalesHOffset + 1] = (scalesH >> 8) & 0xff;
  } else {
    writeF16(dst, base + layout.dOffset, scales[0]!);
    if (ntry > 0) {
      const id = scales[0] !== 0 ? fround(1 / scales[0]!) : 0;
      for (let j = 0; j < superBlockSize; j++) L[j] = bestIndexIq4(fround(id * x[xOff + j]!));
    }
  }

  const qs = base + layout.qsOffset;
  for (let i = 0; i < superBlockSize / 32; i++) {
    for (let j = 0; j < 16; j++) dst[qs + 16 * i + j] = L[32 * i + j]! | (L[32 * i + 16 + j]! << 4);
  }
}
