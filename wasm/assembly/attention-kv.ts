/**
 * Causal multi-head attention (as attention.ts: GQA, sliding window, soft-capping, max-subtracted softmax) over a KV
 * cache stored as f16, Q8_0 or Q4_0 rows, read in place (no dequantized copy). `kind`: 1 = f16, 2 = q8_0, 3 = q4_0.
 *   q       f16: f32 [n, nHeads·headDim] (already rounded to f16, as llama.cpp converts q to K's vec_dot_type);
 *           q8_0 / q4_0: block_q8_0 [n, nHeads·headDim / 32] (q quantized to Q8_0, K's vec_dot_type)
 *   k, v    [contextLength, nKvHeads·headDim] as `kind`: f16 values, or ggml blocks of 32 along the row —
 *           block_q8_0 (34 bytes: f16 d, 32 × i8; value q·d) / block_q4_0 (18 bytes: f16 d, 16 bytes of nibbles, low
 *           nibbles values 0…15 and high ones 16…31 of the block; value (nibble − 8)·d)
 *   out     f32 [n, nHeads·headDim];  scores f32 [nHeads, startPos + n] scratch (one row per head)
 * Scores: f16 K widened to f32 and dotted with q; block K as ggml's vec_dot_q8_0_q8_0 / vec_dot_q4_0_q8_0 (integer
 * dot per block, × dq·dk). Output: Σ_t p_t · V row t, V widened block by block with the outputs kept in registers.
 * Quantized kinds need headDim a multiple of 32 (the host checks it, see src/backend/kv-type.ts).
 */
import { POSITION_BLOCK, attention_f32, expRows, sinkWeight } from './attention';
import { tanhf } from './fast-math';
import { dotI8I8, f16x4ToF32x4, fmaF32x4, hsumF32x4, loadF16 } from './simd-dot';

/** Bytes of a ggml block of 32 values of a block kind (q8_0 34, q4_0 18). */
// @ts-ignore: decorator
@inline function blockBytes(kind: i32): usize {
  return kind == 2 ? 34 : 18;
}

/** Bytes of `cols` values stored as `kind`. */
// @ts-ignore: decorator
@inline function kvBytes(kind: i32, cols: i32): usize {
  return kind == 1 ? <usize>cols << 1 : <usize>(cols >> 5) * blockBytes(kind);
}

/** The 32 values of the Q4_0 block's 16 nibble bytes `x` as signed i8: [values 0…15, values 16…31]. */
// @ts-ignore: decorator
@inline function q4Low(x: v128): v128 {
  return i8x16.sub(v128.and(x, i8x16.splat(0x0f)), i8x16.splat(8));
}
// @ts-ignore: decorator
@inline function q4High(x: v128): v128 {
  return i8x16.sub(v128.and(i16x8.shr_u(x, 4), i8x16.splat(0x0f)), i8x16.splat(8));
}

/** Rounded f32 q row · f16 K row, len values. */
// @ts-ignore: decorator
@inline function dotF16(qp: usize, kp: usize, len: i32): f32 {
  let i = 0;
  let sum: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    let acc0 = f32x4.splat(0);
    let acc1 = f32x4.splat(0);
    for (; i + 8 <= len; i += 8) {
      const h = v128.load(kp + (<usize>i << 1));
      const qo = qp + (<usize>i << 2);
      acc0 = fmaF32x4(acc0, v128.load(qo), f16x4ToF32x4(i32x4.extend_low_i16x8_u(h)));
      acc1 = fmaF32x4(acc1, v128.load(qo, 16), f16x4ToF32x4(i32x4.extend_high_i16x8_u(h)));
    }
    sum = hsumF32x4(f32x4.add(acc0, acc1));
  }
  for (; i < len; i++) sum += load<f32>(qp + (<usize>i << 2)) * loadF16(kp + (<usize>i << 1));
  return sum;
}

/** Q8_0 q blocks · Q8_0 (isQ4 false) or Q4_0 (true) K blocks, nb blocks. */
// @ts-ignore: decorator
@inline function dotBlocks(qp: usize, kp: usize, nb: i32, isQ4: bool): f32 {
  const kb = isQ4 ? 18 : 34;
  if (ASC_FEATURE_SIMD) {
    let acc = f32x4.splat(0);
    for (let b = 0; b < nb; b++) {
      const qb = qp + <usize>b * 34;
      const kr = kp + <usize>b * kb;
      let isum: v128;
      if (isQ4) {
        const x = v128.load(kr, 2);
        isum = i32x4.add(dotI8I8(q4Low(x), v128.load(qb, 2)), dotI8I8(q4High(x), v128.load(qb, 18)));
      } else {
        isum = i32x4.add(dotI8I8(v128.load(kr, 2), v128.load(qb, 2)), dotI8I8(v128.load(kr, 18), v128.load(qb, 18)));
      }
      acc = fmaF32x4(acc, f32x4.convert_i32x4_s(isum), f32x4.splat(loadF16(qb) * loadF16(kr)));
    }
    return hsumF32x4(acc);
  }
  let sum: f32 = 0;
  for (let b = 0; b < nb; b++) {
    const qb = qp + <usize>b * 34;
    const kr = kp + <usize>b * kb;
    let isum = 0;
    if (isQ4) {
      for (let j = 0; j < 16; j++) {
        const x = <i32>load<u8>(kr + 2 + j);
        isum += ((x & 15) - 8) * <i32>load<i8>(qb + 2 + j) + ((x >> 4) - 8) * <i32>load<i8>(qb + 18 + j);
      }
    } else {
      for (let j = 0; j < 32; j++) isum += <i32>load<i8>(kr + 2 + j) * <i32>load<i8>(qb + 2 + j);
    }
    sum += <f32>isum * (loadF16(qb) * loadF16(kr));
  }
  return sum;
}

/** q · K row of one head for `kind` (headDim values). */
// @ts-ignore: decorator
@inline function dotKv(qp: usize, kp: usize, headDim: i32, kind: i32): f32 {
  if (kind == 1) return dotF16(qp, kp, headDim);
  if (kind == 2) return dotBlocks(qp, kp, headDim >> 5, false);
  return dotBlocks(qp, kp, headDim >> 5, true);
}

/** Scores of one query row against K rows first … last into sc + 4·t (× scale, soft-capped); returns their max. */
// @ts-ignore: decorator
@inline function scoreRowsKv(sc: usize, qp: usize, kBase: usize, kStride: usize, first: i32, last: i32, headDim: i32, scale: f32, softcap: f32, kind: i32): f32 {
  let m: f32 = -Infinity;
  for (let t = first; t <= last; t++) {
    let s = dotKv(qp, kBase + <usize>t * kStride, headDim, kind) * scale;
    if (softcap > 0) s = softcap * tanhf(s / softcap);
    store<f32>(sc + (<usize>t << 2), s);
    m = max(m, s);
  }
  return m;
}

/** op[0 … headDim) = inv · Σ_t sc[t] · V row t, V f16 (rows at vBase + t·vStride). */
// @ts-ignore: decorator
@inline function weightedF16(op: usize, sc: usize, vBase: usize, vStride: usize, first: i32, last: i32, headDim: i32, inv: f32): void {
  let c = 0;
  if (ASC_FEATURE_SIMD) {
    const iv = f32x4.splat(inv);
    for (; c + 32 <= headDim; c += 32) {
      const vc = vBase + (<usize>c << 1);
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
      for (let t = first; t <= last; t++) {
        const p = v128.load32_splat(sc + (<usize>t << 2));
        const vr = vc + <usize>t * vStride;
        const h0 = v128.load(vr);
        const h1 = v128.load(vr, 16);
        const h2 = v128.load(vr, 32);
        const h3 = v128.load(vr, 48);
        a0 = fmaF32x4(a0, p, f16x4ToF32x4(i32x4.extend_low_i16x8_u(h0)));
        a1 = fmaF32x4(a1, p, f16x4ToF32x4(i32x4.extend_high_i16x8_u(h0)));
        a2 = fmaF32x4(a2, p, f16x4ToF32x4(i32x4.extend_low_i16x8_u(h1)));
        a3 = fmaF32x4(a3, p, f16x4ToF32x4(i32x4.extend_high_i16x8_u(h1)));
        a4 = fmaF32x4(a4, p, f16x4ToF32x4(i32x4.extend_low_i16x8_u(h2)));
        a5 = fmaF32x4(a5, p, f16x4ToF32x4(i32x4.extend_high_i16x8_u(h2)));
        a6 = fmaF32x4(a6, p, f16x4ToF32x4(i32x4.extend_low_i16x8_u(h3)));
        a7 = fmaF32x4(a7, p, f16x4ToF32x4(i32x4.extend_high_i16x8_u(h3)));
      }
      const o = op + (<usize>c << 2);
      v128.store(o, f32x4.mul(a0, iv));
      v128.store(o, f32x4.mul(a1, iv), 16);
      v128.store(o, f32x4.mul(a2, iv), 32);
      v128.store(o, f32x4.mul(a3, iv), 48);
      v128.store(o, f32x4.mul(a4, iv), 64);
      v128.store(o, f32x4.mul(a5, iv), 80);
      v128.store(o, f32x4.mul(a6, iv), 96);
      v128.store(o, f32x4.mul(a7, iv), 112);
    }
  }
  for (; c < headDim; c++) {
    const vc = vBase + (<usize>c << 1);
    let a: f32 = 0;
    for (let t = first; t <= last; t++) a += load<f32>(sc + (<usize>t << 2)) * loadF16(vc + <usize>t * vStride);
    store<f32>(op + (<usize>c << 2), a * inv);
  }
}

/** Lanes 4·part … 4·part + 3 of the 16 signed i8 lanes of x as f32x4 (part 0…3, a constant). */
// @ts-ignore: decorator
@inline function widenI8(x: v128, part: i32): v128 {
  const h = part < 2 ? i16x8.extend_low_i8x16_s(x) : i16x8.extend_high_i8x16_s(x);
  return f32x4.convert_i32x4_s((part & 1) == 0 ? i32x4.extend_low_i16x8_s(h) : i32x4.extend_high_i16x8_s(h));
}

/** op[0 … headDim) = inv · Σ_t sc[t] · V row t, V Q8_0 (isQ4 false) or Q4_0 blocks. */
// @ts-ignore: decorator
@inline function weightedBlocks(op: usize, sc: usize, vBase: usize, vStride: usize, first: i32, last: i32, headDim: i32, inv: f32, isQ4: bool): void {
  const kb: usize = isQ4 ? 18 : 34;
  const nb = headDim >> 5;
  for (let b = 0; b < nb; b++) {
    const vc = vBase + <usize>b * kb;
    const o = op + (<usize>b << 7);
    if (ASC_FEATURE_SIMD) {
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
      for (let t = first; t <= last; t++) {
        const vr = vc + <usize>t * vStride;
        const p = f32x4.splat(load<f32>(sc + (<usize>t << 2)) * loadF16(vr));
        let x0: v128;
        let x1: v128;
        if (isQ4) {
          const x = v128.load(vr, 2);
          x0 = q4Low(x);
          x1 = q4High(x);
        } else {
          x0 = v128.load(vr, 2);
          x1 = v128.load(vr, 18);
        }
        a0 = fmaF32x4(a0, p, widenI8(x0, 0));
        a1 = fmaF32x4(a1, p, widenI8(x0, 1));
        a2 = fmaF32x4(a2, p, widenI8(x0, 2));
        a3 = fmaF32x4(a3, p, widenI8(x0, 3));
        a4 = fmaF32x4(a4, p, widenI8(x1, 0));
        a5 = fmaF32x4(a5, p, widenI8(x1, 1));
        a6 = fmaF32x4(a6, p, widenI8(x1, 2));
        a7 = fmaF32x4(a7, p, widenI8(x1, 3));
      }
      const iv = f32x4.splat(inv);
      v128.store(o, f32x4.mul(a0, iv));
      v128.store(o, f32x4.mul(a1, iv), 16);
      v128.store(o, f32x4.mul(a2, iv), 32);
      v128.store(o, f32x4.mul(a3, iv), 48);
      v128.store(o, f32x4.mul(a4, iv), 64);
      v128.store(o, f32x4.mul(a5, iv), 80);
      v128.store(o, f32x4.mul(a6, iv), 96);
      v128.store(o, f32x4.mul(a7, iv), 112);
    } else {
      for (let j = 0; j < 32; j++) store<f32>(o + (<usize>j << 2), 0);
      for (let t = first; t <= last; t++) {
        const vr = vc + <usize>t * vStride;
        const p = load<f32>(sc + (<usize>t << 2)) * loadF16(vr);
        for (let j = 0; j < 32; j++) {
          let x: i32;
          if (isQ4) {
            const byte = <i32>load<u8>(vr + 2 + (j & 15));
            x = (j < 16 ? byte & 15 : byte >> 4) - 8;
          } else {
            x = <i32>load<i8>(vr + 2 + j);
          }
          const oj = o + (<usize>j << 2);
          store<f32>(oj, load<f32>(oj) + p * <f32>x);
        }
      }
      for (let j = 0; j < 32; j++) store<f32>(o + (<usize>j << 2), load<f32>(o + (<usize>j << 2)) * inv);
    }
  }
}

/** See the file header. Heads h0 ≤ h < h1 only (so threads can split heads). */
export function attention_kv(
  out: usize, q: usize, k: usize, v: usize, scores: usize,
  n: i32, startPos: i32, nHeads: i32, nKvHeads: i32, headDim: i32,
  window: i32, scale: f32, softcap: f32, kind: i32, sinks: usize, h0: i32, h1: i32,
): void {
  const qCols = nHeads * headDim;
  const kvStride = kvBytes(kind, nKvHeads * headDim);
  const headBytes = kvBytes(kind, headDim);
  const qStride: usize = kind == 1 ? <usize>qCols << 2 : <usize>(qCols >> 5) * 34;
  const qHead: usize = kind == 1 ? <usize>headDim << 2 : <usize>(headDim >> 5) * 34;
  const group = nHeads / nKvHeads;
  const ctx = startPos + n;
  for (let i = 0; i < n; i++) {
    const pos = startPos + i;
    const first = window > 0 ? max(0, pos - window + 1) : 0;
    for (let h = h0; h < h1; h++) {
      const sc = scores + (<usize>(h * ctx) << 2);
      const qp = q + <usize>i * qStride + <usize>h * qHead;
      const kvOff = <usize>(h / group) * headBytes;
      let m = scoreRowsKv(sc, qp, k + kvOff, kvStride, first, pos, headDim, scale, softcap, kind);
      const sink: f32 = sinks != 0 ? load<f32>(sinks + (<usize>h << 2)) : -Infinity;
      m = max(m, sink);
      const inv = <f32>1 / (expRows(sc, first, pos, m) + sinkWeight(sinks, sink, m));
      const op = out + (<usize>(i * qCols + h * headDim) << 2);
      if (kind == 1) weightedF16(op, sc, v + kvOff, kvStride, first, pos, headDim, inv);
      else if (kind == 2) weightedBlocks(op, sc, v + kvOff, kvStride, first, pos, headDim, inv, false);
      else weightedBlocks(op, sc, v + kvOff, kvStride, first, pos, headDim, inv, true);
    }
  }
}

/**
 * attention_kv with its arguments in memory, in the matvec signature (see attention_heads): `p` points at i32
 * {out, q, k, v, scores, n, startPos, nHeads, nKvHeads, headDim, window}, f32 {scale, softcap}, i32 kind, then the
 * sink logits' address (0 = none); at 96 the address of the f16 widening scratch (f32 [nHeads, POSITION_BLOCK,
 * headDim]: the chunk starting at head h0 uses block h0, so threads never share one; 0 = none);
 * heads h0 ≤ h < h1. The other parameters are unused.
 * f16 KV without sink logits, with that scratch, takes attention.ts's grouped path (each block of K/V rows widened
 * once for the whole GQA group, then the f32 register tiles); the rest runs attention_kv head by head.
 */
export function attention_kv_heads(p: usize, _x: usize, _out: usize, _k: i32, h0: i32, h1: i32, _n: i32, _s: i32): void {
  const widen = <usize>load<u32>(p, 96);
  if (load<i32>(p, 52) == 1 && load<u32>(p, 56) == 0 && widen != 0) {
    const headDim = load<i32>(p, 36);
    attention_f32(
      load<u32>(p), load<u32>(p, 4), load<u32>(p, 8), load<u32>(p, 12), load<u32>(p, 16),
      load<i32>(p, 20), load<i32>(p, 24), load<i32>(p, 28), load<i32>(p, 32), headDim, load<i32>(p, 40),
      load<f32>(p, 44), load<f32>(p, 48), 0, h0, h1, 0, 0, p + 80,
      widen + <usize>h0 * POSITION_BLOCK * (<usize>headDim << 2),
    );
    return;
  }
  attention_kv(
    load<u32>(p), load<u32>(p, 4), load<u32>(p, 8), load<u32>(p, 12), load<u32>(p, 16),
    load<i32>(p, 20), load<i32>(p, 24), load<i32>(p, 28), load<i32>(p, 32), load<i32>(p, 36), load<i32>(p, 40),
    load<f32>(p, 44), load<f32>(p, 48), load<i32>(p, 52), load<u32>(p, 56), h0, h1,
  );
}
