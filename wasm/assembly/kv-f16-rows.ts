/**
 * f32 → f16 for the f16 KV cache (src/backend/wasm/wasm-kv-cache.ts): the K and V rows it stores, and q rounded to f16
 * as the f16 attention multiplies keys by it (llama.cpp converts q to K's vec_dot_type). Before, both ran in
 * JavaScript per value (~0.45 ms of CPU per decoded token of Qwen2.5-0.5B, ~8 % of a 128-token prefill).
 * Round to nearest even, subnormals, ±inf past the f16 range, NaN quietened: exactly src/quant/half.ts's
 * f32ToF16Bits, and f16 → f32 exact (as its table), so the values are the JavaScript path's bit for bit.
 */

/** f32 → f16 bits (see the file header). */
// @ts-ignore: decorator
@inline function f32ToF16Bits(x: f32): u32 {
  const bits = reinterpret<u32>(x);
  const sign = (bits >>> 16) & 0x8000;
  const abs = bits & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00;
  const e = <i32>(abs >>> 23) - 112; // f16 biased exponent
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign; // below half the smallest subnormal (2^-25): rounds to zero
    const m = (abs & 0x7fffff) | 0x800000;
    const shift = <u32>(14 - e); // 14…24
    let h = m >>> shift;
    const rem = m & ((<u32>1 << shift) - 1);
    const half = <u32>1 << (shift - 1);
    if (rem > half || (rem == half && (h & 1) == 1)) h++;
    return sign | h;
  }
  let h = (<u32>e << 10) | ((abs >>> 13) & 0x3ff);
  const rem = abs & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1) == 1)) h++; // a carry into the exponent is correct (→ inf too)
  return sign | h;
}

/** f16 bits → f32, exact for every f16 (subnormals, ±inf, NaN with its payload, quiet). */
// @ts-ignore: decorator
@inline function f16BitsToF32(h: u32): f32 {
  const sign = (h & 0x8000) << 16;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp == 0x1f) return reinterpret<f32>(sign | 0x7f800000 | (mant << 13) | (mant != 0 ? 0x400000 : 0));
  // Normals and subnormals: the bits shifted into f32 position, × 2^112 rebias the exponent (exact).
  return reinterpret<f32>(reinterpret<u32>(reinterpret<f32>((h & 0x7fff) << 13) * <f32>5.192296858534828e33) | sign);
}

/**
 * Rows r0 ≤ r < r1 of `cols` f32 values (row r at x + 4·r·srcStride) stored as f16 (row r at out + 2·r·dstStride), in
 * the matvec signature (`_p` unused).
 */
export function f16_store_rows(_p: usize, x: usize, out: usize, cols: i32, r0: i32, r1: i32, srcStride: i32, dstStride: i32): void {
  for (let r = r0; r < r1; r++) {
    const s = x + (<usize>r * <usize>srcStride << 2);
    const d = out + (<usize>r * <usize>dstStride << 1);
    for (let i = 0; i < cols; i++) store<u16>(d + (<usize>i << 1), <u16>f32ToF16Bits(load<f32>(s + (<usize>i << 2))));
  }
}

/** out[i] = x[i] rounded to f16 (as f32), 0 ≤ i < count (in place when out = x). */
export function f16_round(x: usize, out: usize, count: i32): void {
  for (let i = 0; i < count; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, f16BitsToF32(f32ToF16Bits(load<f32>(x + o))));
  }
}
