/**
 * Causal multi-head attention of a step's query rows over one layer's f32 KV cache, in f32 (the reference backend
 * does the same in f64). GQA (query head h reads KV head h / (nHeads / nKvHeads)), sliding window, and
 * attention-logit soft-capping (gemma2), per-head sink logits (gpt-oss: one more softmax term e^(sink − max) with no
 * value). Softmax subtracts the row maximum (sink included) before exp.
 *   q, out  f32 [n, nHeads·headDim]          k, v  f32 [contextLength, nKvHeads·headDim]
 *   scores  f32 [nHeads, startPos + n] scratch (one row per head, so threads splitting heads never share one)
 * Row i sits at position startPos + i and sees positions max(0, pos − window + 1) … pos (window 0 = all).
 * ALiBi (jina-bert-v2; `alibi` the address of f32 slopes [nHeads], 0 = none): after scaling and soft-capping, head h's
 * score of key t loses slope_h·|pos + qShift − t| (qShift: the row's own position minus the one it is placed at, for
 * the host's non-causal rows, which sit at the sequence's last position to see all of it).
 * SIMD builds (headDim a multiple of 4): scores four positions at a time (one q load feeds four K rows, one
 * transpose-add instead of four horizontal sums), exp four at a time, and the weighted V sum with its output kept in
 * registers, 32 columns per pass over the positions (no load/store of the output row per position).
 * GQA heads sharing a KV head go together, block by block of POSITION_BLOCK positions: each block of K (then V) rows
 * is read from memory once for the whole group and stays in cache while every head of the group uses it (at 4,096
 * positions one KV head's K and V are 2 MiB, more than a core's L2: head by head, each of the group's heads streamed
 * them again from L3 or memory). With sink logits (gpt-oss) heads go one by one over all positions, as before.
 * f16 KV (attention-kv.ts's attention_kv_heads passes `widen`, a scratch of POSITION_BLOCK f32 rows): the same grouped
 * path, each block of f16 K (then V) rows widened once into the scratch (attention-widen.ts) for the whole group.
 */
import { expf, tanhf } from './fast-math';
import { scoreGroupBlock, sumRow, weightGroupBlock } from './attention-group';
import { fmaF32x4, hsum4F32, hsumF32x4 } from './simd-dot';
import { expNeg4 } from './softmax-exp';
import { widenF16Rows } from './attention-widen';

// @ts-ignore: decorator
@inline export function dotF32(a: usize, b: usize, len: i32): f32 {
  let i = 0;
  let sum: f32 = 0;
  if (ASC_FEATURE_SIMD) {
    let acc0 = f32x4.splat(0);
    let acc1 = f32x4.splat(0);
    for (; i + 8 <= len; i += 8) {
      acc0 = fmaF32x4(acc0, v128.load(a + (<usize>i << 2)), v128.load(b + (<usize>i << 2)));
      acc1 = fmaF32x4(acc1, v128.load(a + (<usize>i << 2), 16), v128.load(b + (<usize>i << 2), 16));
    }
    sum = hsumF32x4(f32x4.add(acc0, acc1));
  }
  for (; i < len; i++) sum += load<f32>(a + (<usize>i << 2)) * load<f32>(b + (<usize>i << 2));
  return sum;
}

/** [q·k(t), q·k(t+1), q·k(t+2), q·k(t+3)] for K rows at kp, kp + stride, …; len a multiple of 4. */
// @ts-ignore: decorator
@inline function dot4RowsF32(qp: usize, kp: usize, stride: usize, len: i32): v128 {
  let a0 = f32x4.splat(0);
  let a1 = f32x4.splat(0);
  let a2 = f32x4.splat(0);
  let a3 = f32x4.splat(0);
  const k1 = kp + stride;
  const k2 = k1 + stride;
  const k3 = k2 + stride;
  for (let i = 0; i < len; i += 4) {
    const o = <usize>i << 2;
    const qv = v128.load(qp + o);
    a0 = fmaF32x4(a0, qv, v128.load(kp + o));
    a1 = fmaF32x4(a1, qv, v128.load(k1 + o));
    a2 = fmaF32x4(a2, qv, v128.load(k2 + o));
    a3 = fmaF32x4(a3, qv, v128.load(k3 + o));
  }
  return hsum4F32(a0, a1, a2, a3);
}

/**
 * Scores of one query row against K rows first … last (stored at sc + 4·t, already × scale and soft-capped);
 * returns their maximum.
 */
// @ts-ignore: decorator
@inline export function scoreRows(sc: usize, qp: usize, kBase: usize, kStride: usize, first: i32, last: i32, headDim: i32, scale: f32, softcap: f32): f32 {
  let m: f32 = -Infinity;
  let t = first;
  if (ASC_FEATURE_SIMD && (headDim & 3) == 0) {
    const sv = f32x4.splat(scale);
    let mv = f32x4.splat(-Infinity);
    for (; t + 4 <= last + 1; t += 4) {
      const s = f32x4.mul(dot4RowsF32(qp, kBase + <usize>t * kStride, kStride, headDim), sv);
      v128.store(sc + (<usize>t << 2), s);
      mv = f32x4.pmax(mv, s);
    }
    m = max(max(f32x4.extract_lane(mv, 0), f32x4.extract_lane(mv, 1)), max(f32x4.extract_lane(mv, 2), f32x4.extract_lane(mv, 3)));
  }
  for (; t <= last; t++) {
    const s = dotF32(qp, kBase + <usize>t * kStride, headDim) * scale;
    store<f32>(sc + (<usize>t << 2), s);
    m = max(m, s);
  }
  return softcap > 0 ? softcapRows(sc, first, last, softcap) : m;
}

/** sc[t] = softcap · tanh(sc[t] / softcap) for first ≤ t ≤ last (gemma2); returns their maximum. */
// @ts-ignore: decorator
@inline export function softcapRows(sc: usize, first: i32, last: i32, softcap: f32): f32 {
  let m: f32 = -Infinity;
  for (let t = first; t <= last; t++) {
    const s = softcap * tanhf(load<f32>(sc + (<usize>t << 2)) / softcap);
    store<f32>(sc + (<usize>t << 2), s);
    m = max(m, s);
  }
  return m;
}

/** sc[t] = e^(sc[t] − m) for first ≤ t ≤ last; returns their sum. */
// @ts-ignore: decorator
@inline export function expRows(sc: usize, first: i32, last: i32, m: f32): f32 {
  let sum: f32 = 0;
  let t = first;
  if (ASC_FEATURE_SIMD) {
    const mv = f32x4.splat(m);
    let acc = f32x4.splat(0);
    for (; t + 4 <= last + 1; t += 4) {
      const p = sc + (<usize>t << 2);
      const e = expNeg4(f32x4.sub(v128.load(p), mv));
      v128.store(p, e);
      acc = f32x4.add(acc, e);
    }
    sum = hsumF32x4(acc);
  }
  for (; t <= last; t++) {
    const e = expf(load<f32>(sc + (<usize>t << 2)) - m);
    store<f32>(sc + (<usize>t << 2), e);
    sum += e;
  }
  return sum;
}

/**
 * op[0 … headDim) = inv · Σ_t sc[t] · V row t (rows at vBase + t·vStride); with `acc` the sum continues from what
 * op holds (one block of positions' share; inv is 1 for every block but the last, which applies 1 / Σ).
 */
// @ts-ignore: decorator
@inline export function weightedRows(op: usize, sc: usize, vBase: usize, vStride: usize, first: i32, last: i32, headDim: i32, inv: f32, acc: bool = false): void {
  let c = 0;
  if (ASC_FEATURE_SIMD) {
    const iv = f32x4.splat(inv);
    for (; c + 32 <= headDim; c += 32) {
      const vc = vBase + (<usize>c << 2);
      const o0 = op + (<usize>c << 2);
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
      if (acc) {
        a0 = v128.load(o0); a1 = v128.load(o0, 16); a2 = v128.load(o0, 32); a3 = v128.load(o0, 48);
        a4 = v128.load(o0, 64); a5 = v128.load(o0, 80); a6 = v128.load(o0, 96); a7 = v128.load(o0, 112);
      }
      for (let t = first; t <= last; t++) {
        const p = v128.load32_splat(sc + (<usize>t << 2));
        const vr = vc + <usize>t * vStride;
        a0 = fmaF32x4(a0, p, v128.load(vr));
        a1 = fmaF32x4(a1, p, v128.load(vr, 16));
        a2 = fmaF32x4(a2, p, v128.load(vr, 32));
        a3 = fmaF32x4(a3, p, v128.load(vr, 48));
        a4 = fmaF32x4(a4, p, v128.load(vr, 64));
        a5 = fmaF32x4(a5, p, v128.load(vr, 80));
        a6 = fmaF32x4(a6, p, v128.load(vr, 96));
        a7 = fmaF32x4(a7, p, v128.load(vr, 112));
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
    for (; c + 4 <= headDim; c += 4) {
      const vc = vBase + (<usize>c << 2);
      let a0 = acc ? v128.load(op + (<usize>c << 2)) : f32x4.splat(0);
      for (let t = first; t <= last; t++) a0 = fmaF32x4(a0, v128.load32_splat(sc + (<usize>t << 2)), v128.load(vc + <usize>t * vStride));
      v128.store(op + (<usize>c << 2), f32x4.mul(a0, iv));
    }
  }
  for (; c < headDim; c++) {
    const vc = vBase + (<usize>c << 2);
    let a: f32 = acc ? load<f32>(op + (<usize>c << 2)) : 0;
    for (let t = first; t <= last; t++) a += load<f32>(sc + (<usize>t << 2)) * load<f32>(vc + <usize>t * vStride);
    store<f32>(op + (<usize>c << 2), a * inv);
  }
}

/** e^(sink − m): the softmax mass of head h's sink logit (gpt-oss), 0 without sinks (`sinks` 0). */
// @ts-ignore: decorator
@inline export function sinkWeight(sinks: usize, sink: f32, m: f32): f32 {
  return sinks != 0 ? expf(sink - m) : 0;
}

/** Subtracts slope·|at − t| from the scores sc[first … last] (ALiBi); returns their new maximum. */
// @ts-ignore: decorator
@inline function alibiRows(sc: usize, first: i32, last: i32, slope: f32, at: i32): f32 {
  let m: f32 = -Infinity;
  for (let t = first; t <= last; t++) {
    const p = sc + (<usize>t << 2);
    const s = load<f32>(p) - slope * <f32>abs(at - t);
    store<f32>(p, s);
    m = max(m, s);
  }
  return m;
}

/**
 * Positions per block of the grouped passes: a block of one KV head's K (or V) rows stays in cache across its group
 * (128 rows of 64 × f32: 32 KiB, within L1; 256 measured a few % slower at 4,096 positions).
 */
export const POSITION_BLOCK = 128;

/** Largest of sc[first … last]. */
// @ts-ignore: decorator
@inline export function maxRow(sc: usize, first: i32, last: i32): f32 {
  let m: f32 = -Infinity;
  let t = first;
  if (ASC_FEATURE_SIMD) {
    let mv = f32x4.splat(-Infinity);
    for (; t + 4 <= last + 1; t += 4) mv = f32x4.pmax(mv, v128.load(sc + (<usize>t << 2)));
    m = max(max(f32x4.extract_lane(mv, 0), f32x4.extract_lane(mv, 1)), max(f32x4.extract_lane(mv, 2), f32x4.extract_lane(mv, 3)));
  }
  for (; t <= last; t++) m = max(m, load<f32>(sc + (<usize>t << 2)));
  return m;
}

/** See the file header. Heads h0 ≤ h < h1 only (so threads can split heads). */
export function attention_f32(
  out: usize, q: usize, k: usize, v: usize, scores: usize,
  n: i32, startPos: i32, nHeads: i32, nKvHeads: i32, headDim: i32,
  window: i32, scale: f32, softcap: f32, sinks: usize, h0: i32, h1: i32,
  alibi: usize = 0, qShift: i32 = 0, touchWord: usize = 0, widen: usize = 0,
): void {
  const qCols = nHeads * headDim;
  // f16 KV (widen ≠ 0, grouped path only): rows of 2-byte values, each block widened to f32 at `widen` first.
  const f16 = widen != 0;
  const kvStride = <usize>(nKvHeads * headDim) << (f16 ? 1 : 2);
  const headBytes = <usize>headDim << 2;
  const group = nHeads / nKvHeads;
  const ctx = startPos + n;
  for (let i = 0; i < n; i++) {
    const pos = startPos + i;
    const first = window > 0 ? max(0, pos - window + 1) : 0;
    if (sinks != 0 || alibi != 0) {
      // Sink logits (gpt-oss) and ALiBi (jina-bert-v2): head by head, the sink's softmax mass needs the row's maximum
      // at the end, and ALiBi biases each head's scores by its own slope.
      for (let h = h0; h < h1; h++) {
        const sc = scores + (<usize>(h * ctx) << 2);
        const qp = q + (<usize>(i * qCols + h * headDim) << 2);
        const kvOff = <usize>((h / group) * headDim) << 2;
        let m = scoreRows(sc, qp, k + kvOff, kvStride, first, pos, headDim, scale, softcap);
        if (alibi != 0) m = alibiRows(sc, first, pos, load<f32>(alibi + (<usize>h << 2)), pos + qShift);
        const sink: f32 = sinks != 0 ? load<f32>(sinks + (<usize>h << 2)) : -Infinity;
        m = max(m, sink);
        const sum = expRows(sc, first, pos, m) + sinkWeight(sinks, sink, m);
        weightedRows(out + (<usize>(i * qCols + h * headDim) << 2), sc, v + kvOff, kvStride, first, pos, headDim, <f32>1 / sum);
      }
      continue;
    }
    for (let g = h0 / group; g * group < h1; g++) {
      const ha = max(h0, g * group);
      const hb = min(h1, (g + 1) * group);
      const kvOff = <usize>(g * headDim) << (f16 ? 1 : 2);
      // Scores block by block, every head of the group on a block's K rows while they are in cache.
      const qRow = q + (<usize>(i * qCols) << 2);
      const tiled = ASC_FEATURE_SIMD && (headDim & 3) == 0;
      for (let b = first; b <= pos; b += POSITION_BLOCK) {
        const e = min(pos, b + POSITION_BLOCK - 1);
        // f16: the block's K rows widened (row t at kB + t·kS, kB possibly wrapping below the scratch: u32 arithmetic).
        let kB = k + kvOff;
        let kS = kvStride;
        if (f16) {
          widenF16Rows(widen, kB, kvStride, b, e, headDim, pos);
          kB = widen - <usize>b * headBytes;
          kS = headBytes;
        }
        // SIMD: 4 positions × 2 heads per step (attention-group.ts), then each head's tail and soft-cap as scoreRows.
        // (No read-ahead from the scratch block: `pos` −1.)
        const t = tiled ? scoreGroupBlock(scores, ctx, qRow, ha, hb, kB, kS, b, e, headDim, scale, f16 ? -1 : pos, touchWord) : b;
        for (let h = ha; h < hb; h++) {
          const sc = scores + (<usize>(h * ctx) << 2);
          if (t <= e) scoreRows(sc, qRow + (<usize>(h * headDim) << 2), kB, kS, t, e, headDim, scale, 0);
          if (softcap > 0) softcapRows(sc, b, e, softcap);
        }
      }
      // Softmax numerators per head (the maximum taken again over the row: a cheap pass, no state across blocks).
      for (let h = ha; h < hb; h++) expRows(scores + (<usize>(h * ctx) << 2), first, pos, maxRow(scores + (<usize>(h * ctx) << 2), first, pos));
      // Output likewise block by block over V, each head's share added to its output row, × 1 / Σ at the last
      // block: the same operations in the same order as one pass over all positions (bit for bit the pair kernel's
      // and the head-by-head result).
      for (let b = first; b <= pos; b += POSITION_BLOCK) {
        const e = min(pos, b + POSITION_BLOCK - 1);
        let vB = v + kvOff;
        let vS = kvStride;
        if (f16) {
          widenF16Rows(widen, vB, kvStride, b, e, headDim, pos);
          vB = widen - <usize>b * headBytes;
          vS = headBytes;
        }
        if (tiled) {
          weightGroupBlock(out + (<usize>(i * qCols) << 2), scores, ctx, ha, hb, vB, vS, b, e, headDim, first, pos);
          continue;
        }
        for (let h = ha; h < hb; h++) {
          const sc = scores + (<usize>(h * ctx) << 2);
          const inv: f32 = e == pos ? <f32>1 / sumRow(sc, first, pos) : 1;
          weightedRows(out + (<usize>(i * qCols + h * headDim) << 2), sc, vB, vS, b, e, headDim, inv, b > first);
        }
      }
    }
  }
}

/**
 * attention_f32 with its arguments in memory, in the matvec signature so the host's thread pool can split heads
 * like rows: `p` points at i32 {out, q, k, v, scores, n, startPos, nHeads, nKvHeads, headDim, window} then
 * f32 {scale, softcap}, (at 52 the KV kind of attention_kv_heads), then at 56 the address of the per-head sink logits
 * (f32 [nHeads], 0 = none), at 60 that of the ALiBi slopes (f32 [nHeads], 0 = none) and at 64 the rows' qShift;
 * heads h0 ≤ h < h1. The 16 bytes at 80 are the read-ahead's scratch (`touchWord`: written with meaningless values;
 * threads share them). The other parameters are unused.
 */
export function attention_heads(p: usize, _x: usize, _out: usize, _k: i32, h0: i32, h1: i32, _n: i32, _s: i32): void {
  attention_f32(
    load<u32>(p), load<u32>(p, 4), load<u32>(p, 8), load<u32>(p, 12), load<u32>(p, 16),
    load<i32>(p, 20), load<i32>(p, 24), load<i32>(p, 28), load<i32>(p, 32), load<i32>(p, 36), load<i32>(p, 40),
    load<f32>(p, 44), load<f32>(p, 48), load<u32>(p, 56), h0, h1, load<u32>(p, 60), load<i32>(p, 64), p + 80,
  );
}
