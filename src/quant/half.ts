/**
 * Half-precision conversions exactly as ggml performs them: IEEE binary16 (f16) and bfloat16 (bf16) to and from f32.
 * f16 → f32 is exact (subnormals, ±inf; NaNs come back quiet with their payload, as ggml's portable path does);
 * f32 → f16 rounds to nearest-even with NaN → 0x7E00; f32 → bf16 rounds to nearest-even with NaN quietened.
 */

// Scratch views for reinterpreting f32 bits; module-private, used synchronously only.
const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** Bits of the f32 nearest to `x` (x is rounded to f32 first). */
function f32Bits(x: number): number {
  scratchF32[0] = x;
  return scratchU32[0]!;
}

/** Bits of the f32 equal to the f16 with bits `h` (exact; NaN payload kept and quietened, like ggml). */
function f16BitsToF32Bits(h: number): number {
  const sign = (h & 0x8000) << 16;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0x1f) {
    // inf keeps a zero mantissa; NaN is quietened (bit 22) the way ggml's multiply-by-2^-112 path does.
    return (sign | 0x7f800000 | (mant << 13) | (mant !== 0 ? 0x00400000 : 0)) >>> 0;
  }
  if (exp !== 0) return (sign | ((exp + 112) << 23) | (mant << 13)) >>> 0;
  if (mant === 0) return sign >>> 0;
  // Subnormal: value = mant · 2^-24; normalise the mantissa into the f32 format.
  let e = 113; // f32 biased exponent of 2^-14
  let m = mant;
  while ((m & 0x400) === 0) {
    m <<= 1;
    e--;
  }
  return (sign | (e << 23) | ((m & 0x3ff) << 13)) >>> 0;
}

let f16Table: Float32Array | undefined;
let f16BitsTable: Uint32Array | undefined;

/** Bits table: f32 bits of every f16 (65,536 entries, 256 KiB), built on first use. */
export function f16ToF32BitsTable(): Uint32Array {
  if (f16BitsTable === undefined) {
    const t = new Uint32Array(65536);
    for (let h = 0; h < 65536; h++) t[h] = f16BitsToF32Bits(h);
    f16BitsTable = t;
  }
  return f16BitsTable;
}

/** Value table: f32 value of every f16 (shares memory with the bits table). */
function f16ToF32Table(): Float32Array {
  if (f16Table === undefined) {
    const bits = f16ToF32BitsTable();
    f16Table = new Float32Array(bits.buffer, bits.byteOffset, bits.length);
  }
  return f16Table;
}

/** Reads the little-endian f16 at `bytes[offset]` as an f32 value. */
export function readF16(bytes: Uint8Array, offset: number): number {
  return f16ToF32Table()[bytes[offset]! | (bytes[offset + 1]! << 8)]!;
}

/**
 * f32 → f16 bits, round to nearest-even, overflow → ±inf, NaN → sign|0x7E00 (ggml's `GGML_FP32_TO_FP16`).
 * `x` is first rounded to f32.
 */
export function f32ToF16Bits(x: number): number {
  const bits = f32Bits(x);
  const sign = (bits >>> 16) & 0x8000;
  const abs = bits & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00;
  const e = (abs >>> 23) - 112; // f16 biased exponent
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign; // below half the smallest subnormal (2^-25): rounds to zero
    const m = (abs & 0x7fffff) | 0x800000;
    const shift = 14 - e; // 14..24
    let h = m >>> shift;
    const rem = m & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1) === 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | ((abs >>> 13) & 0x3ff);
  const rem = abs & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) === 1)) h++; // a carry into the exponent is correct (→ inf too)
  return sign | h;
}

/** f16 bits → f32 value (exact). */
function f16ToF32(h: number): number {
  return f16ToF32Table()[h & 0xffff]!;
}

/** f32 → f16 → f32: the value ggml gets back after storing `x` as f16. */
export function roundToF16(x: number): number {
  return f16ToF32(f32ToF16Bits(x));
}

/** Writes `x` as a little-endian f16 at `bytes[offset]`. */
export function writeF16(bytes: Uint8Array, offset: number, x: number): void {
  const h = f32ToF16Bits(x);
  bytes[offset] = h & 0xff;
  bytes[offset + 1] = h >>> 8;
}

/** f32 → bf16 bits, round to nearest-even, NaN quietened (ggml's `GGML_FP32_TO_BF16`). */
export function f32ToBf16Bits(x: number): number {
  const u = f32Bits(x);
  if ((u & 0x7fffffff) > 0x7f800000) return ((u >>> 16) | 64) & 0xffff;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}
