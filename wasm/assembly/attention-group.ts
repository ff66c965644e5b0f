/**
 * Register-tiled passes of attention.ts's grouped path (the query heads of one GQA group over one block of
 * positions, f32 KV, SIMD builds, headDim a multiple of 4): every K or V load serves two heads.
 *   scores: 4 positions × 2 heads per step — one K vector feeds both heads' dot products (one q vector each feeds 4
 *           positions), 8 accumulators;
 *   V sum:  16 output columns × 2 heads per position — one V vector feeds both heads' outputs.
 * Two heads, not three: V8 keeps 15 vector registers for wasm on x64, and three heads' 12 accumulators plus their
 * operands spill (measured: the 3-head tiles were ~15 % slower than these at 4,096 positions).
 * Each (head, position) score and each (head, column) output is the same chain of multiply-adds, in the same order, as
 * the one-head kernels in attention.ts (dot4RowsF32 then hsum4F32 then × scale; Σ_t in key order then × inv), so the
 * results are bit for bit theirs; only which head's work sits next to which changes.
 */
import { fmaF32x4, hsum4F32, hsumF32x4 } from './simd-dot';

/**
 * Rows read ahead (see readAhead): far enough that a row's cache lines arrive from memory before the passes reach
 * it, near enough that they are still in L1/L2 then (64 rows of one KV head's 64 × f32 K: 16 KiB).
 */
const READ_AHEAD = 64;

/**
 * One load per 64-byte cache line of the row at `row` (`bytes` long), OR-ed into `acc`: wasm has no prefetch, and
 * the hardware prefetcher does not run ahead of the kernels' strided walk of one KV head's rows (rows of nKvHeads
 * heads interleaved), so the passes touch the row READ_AHEAD positions ahead while they compute on this one — its
 * misses overlap the arithmetic instead of stalling it (K of the score pass: ~3 % less CPU at 4,096 positions on a
 * busy machine; V read ahead likewise in the weighted sum measured no gain). The OR-ed lanes are stored to 16 bytes
 * of scratch at the end (`touchWord`, 0 = none) so that the loads are not optimised away.
 */
// @ts-ignore: decorator
@inline function readAhead(acc: v128, row: usize, bytes: usize): v128 {
  let a = acc;
  for (let l: usize = 0; l < bytes; l += 64) a = v128.or(a, v128.load(row + l));
  return a;
}

/** Σ sc[first … last], added in expRows' order (so it is bit for bit the sum expRows returned). */
// @ts-ignore: decorator
@inline export function sumRow(sc: usize, first: i32, last: i32): f32 {
  let sum: f32 = 0;
  let t = first;
  if (ASC_FEATURE_SIMD) {
    let acc = f32x4.splat(0);
    for (; t + 4 <= last + 1; t += 4) acc = f32x4.add(acc, v128.load(sc + (<usize>t << 2)));
    sum = hsumF32x4(acc);
  }
  for (; t <= last; t++) sum += load<f32>(sc + (<usize>t << 2));
  return sum;
}

/**
 * Scores of heads h (a query row of `cnt` ≤ 2 heads at qp, qp + headBytes, …) against the 4 K rows at kp, kp + kStride,
 * …, × scale, stored at sc, sc + rowBytes, … (each head's scores row at the positions' offset).
 */
// @ts-ignore: decorator
@inline function score4Heads(sc: usize, rowBytes: usize, qp: usize, headBytes: usize, cnt: i32, kp: usize, kStride: usize, headDim: i32, sv: v128): void {
  const k1 = kp + kStride;
  const k2 = k1 + kStride;
  const k3 = k2 + kStride;
  const q1 = qp + headBytes;
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  if (cnt == 2) {
    for (let i = 0; i < headDim; i += 4) {
      const o = <usize>i << 2;
      const x0 = v128.load(qp + o);
      const x1 = v128.load(q1 + o);
      let kv = v128.load(kp + o);
      a0 = fmaF32x4(a0, x0, kv);
      b0 = fmaF32x4(b0, x1, kv);
      kv = v128.load(k1 + o);
      a1 = fmaF32x4(a1, x0, kv);
      b1 = fmaF32x4(b1, x1, kv);
      kv = v128.load(k2 + o);
      a2 = fmaF32x4(a2, x0, kv);
      b2 = fmaF32x4(b2, x1, kv);
      kv = v128.load(k3 + o);
      a3 = fmaF32x4(a3, x0, kv);
      b3 = fmaF32x4(b3, x1, kv);
    }
  } else {
    for (let i = 0; i < headDim; i += 4) {
      const o = <usize>i << 2;
      const x0 = v128.load(qp + o);
      a0 = fmaF32x4(a0, x0, v128.load(kp + o));
      a1 = fmaF32x4(a1, x0, v128.load(k1 + o));
      a2 = fmaF32x4(a2, x0, v128.load(k2 + o));
      a3 = fmaF32x4(a3, x0, v128.load(k3 + o));
    }
  }
  v128.store(sc, f32x4.mul(hsum4F32(a0, a1, a2, a3), sv));
  if (cnt >= 2) v128.store(sc + rowBytes, f32x4.mul(hsum4F32(b0, b1, b2, b3), sv));
}

/**
 * Scores (× scale) of query heads ha ≤ h < hb (rows at qRow + h·headDim·4) against K rows b … b + 4·⌊(e − b + 1) / 4⌋ − 1
 * (at kBase + t·kStride) into head h's scores row at scores + h·ctx·4, reading K rows up to `pos` READ_AHEAD
 * positions ahead; returns the first position not scored (the caller scores the tail of fewer than 4 positions).
 */
export function scoreGroupBlock(scores: usize, ctx: i32, qRow: usize, ha: i32, hb: i32, kBase: usize, kStride: usize, b: i32, e: i32, headDim: i32, scale: f32, pos: i32, touchWord: usize): i32 {
  const sv = f32x4.splat(scale);
  const rowBytes = <usize>ctx << 2;
  const headBytes = <usize>headDim << 2;
  let t = b;
  let touched = i32x4.splat(0);
  for (; t + 4 <= e + 1; t += 4) {
    const kp = kBase + <usize>t * kStride;
    if (t + READ_AHEAD + 3 <= pos) {
      const ka = kp + <usize>READ_AHEAD * kStride;
      for (let r: usize = 0; r < 4; r++) touched = readAhead(touched, ka + r * kStride, headBytes);
    }
    for (let h = ha; h < hb; h += 2) {
      score4Heads(scores + <usize>h * rowBytes + (<usize>t << 2), rowBytes, qRow + <usize>h * headBytes, headBytes, min(2, hb - h), kp, kStride, headDim, sv);
    }
  }
  if (touchWord != 0) v128.store(touchWord, touched);
  return t;
}

/**
 * Outputs of query heads ha ≤ h < hb (rows at outRow + h·headDim·4, probabilities in head h's scores row) over V rows
 * b … e: out = inv_h · (out (if acc) + Σ_t p_t · V row t), columns 16 at a time then 4 at a time (headDim a multiple
 * of 4); acc: b > first (a later block adds to what the earlier ones left); inv_h = 1 / Σ of head h's numerators
 * first … pos at the last block (e = pos), else 1.
 */
export function weightGroupBlock(outRow: usize, scores: usize, ctx: i32, ha: i32, hb: i32, vBase: usize, vStride: usize, b: i32, e: i32, headDim: i32, first: i32, pos: i32): void {
  const acc = b > first;
  const rowBytes = <usize>ctx << 2;
  const headBytes = <usize>headDim << 2;
  for (let h = ha; h < hb; h += 2) {
    const cnt = min(2, hb - h);
    const s0 = scores + <usize>h * rowBytes;
    const s1 = s0 + rowBytes;
    const o0 = outRow + <usize>h * headBytes;
    const o1 = o0 + headBytes;
    const last = e == pos;
    const i0 = f32x4.splat(last ? <f32>1 / sumRow(s0, first, pos) : 1);
    const i1 = f32x4.splat(last && cnt >= 2 ? <f32>1 / sumRow(s1, first, pos) : 1);
    let c = 0;
    for (; c + 16 <= headDim; c += 16) {
      const c4 = <usize>c << 2;
      const vc = vBase + c4;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
      if (acc) {
        a0 = v128.load(o0 + c4); a1 = v128.load(o0 + c4, 16); a2 = v128.load(o0 + c4, 32); a3 = v128.load(o0 + c4, 48);
        if (cnt >= 2) {
          b0 = v128.load(o1 + c4); b1 = v128.load(o1 + c4, 16); b2 = v128.load(o1 + c4, 32); b3 = v128.load(o1 + c4, 48);
        }
      }
      if (cnt == 2) {
        for (let t = b; t <= e; t++) {
          const t4 = <usize>t << 2;
          const p0 = v128.load32_splat(s0 + t4);
          const p1 = v128.load32_splat(s1 + t4);
          const vr = vc + <usize>t * vStride;
          let v = v128.load(vr);
          a0 = fmaF32x4(a0, p0, v);
          b0 = fmaF32x4(b0, p1, v);
          v = v128.load(vr, 16);
          a1 = fmaF32x4(a1, p0, v);
          b1 = fmaF32x4(b1, p1, v);
          v = v128.load(vr, 32);
          a2 = fmaF32x4(a2, p0, v);
          b2 = fmaF32x4(b2, p1, v);
          v = v128.load(vr, 48);
          a3 = fmaF32x4(a3, p0, v);
          b3 = fmaF32x4(b3, p1, v);
        }
      } else {
        for (let t = b; t <= e; t++) {
          const p0 = v128.load32_splat(s0 + (<usize>t << 2));
          const vr = vc + <usize>t * vStride;
          a0 = fmaF32x4(a0, p0, v128.load(vr));
          a1 = fmaF32x4(a1, p0, v128.load(vr, 16));
          a2 = fmaF32x4(a2, p0, v128.load(vr, 32));
          a3 = fmaF32x4(a3, p0, v128.load(vr, 48));
        }
      }
      v128.store(o0 + c4, f32x4.mul(a0, i0)); v128.store(o0 + c4, f32x4.mul(a1, i0), 16);
      v128.store(o0 + c4, f32x4.mul(a2, i0), 32); v128.store(o0 + c4, f32x4.mul(a3, i0), 48);
      if (cnt >= 2) {
        v128.store(o1 + c4, f32x4.mul(b0, i1)); v128.store(o1 + c4, f32x4.mul(b1, i1), 16);
        v128.store(o1 + c4, f32x4.mul(b2, i1), 32); v128.store(o1 + c4, f32x4.mul(b3, i1), 48);
      }
    }
    for (; c < headDim; c += 4) {
      const c4 = <usize>c << 2;
      const vc = vBase + c4;
      for (let j = 0; j < cnt; j++) {
        const sj = s0 + <usize>j * rowBytes;
        const oj = o0 + <usize>j * headBytes + c4;
        let a = acc ? v128.load(oj) : f32x4.splat(0);
        for (let t = b; t <= e; t++) a = fmaF32x4(a, v128.load32_splat(sj + (<usize>t << 2)), v128.load(vc + <usize>t * vStride));
        v128.store(oj, f32x4.mul(a, j == 0 ? i0 : i1));
      }
    }
  }
}
