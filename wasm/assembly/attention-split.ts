/**
 * Decode attention with a query row's positions split across threads (flash-decoding style), for when a model has
 * fewer KV heads than threads: attention.ts's chunks are whole GQA groups, so with e.g. one KV head one thread would
 * do all of it. Item r of `nKvHeads · nParts` is KV head g = r / nParts over part j = r % nParts of the positions
 * (whole POSITION_BLOCK blocks from the row's first position); it runs the grouped path of attention.ts on that range
 * for the group's heads and leaves, per head h, an unnormalised partial result for the host to combine:
 *   parts  f32 [nParts, nHeads, headDim]  Σ_t e^(s_t − m) · V row t over the part's positions
 *   stats  f32 [nParts, nHeads, 2]        m (the part's score maximum) and Σ_t e^(s_t − m)
 * The host then takes out = Σ_j e^(m_j − M) · parts_j / Σ_j e^(m_j − M) · sum_j, M = max_j m_j
 * (src/backend/wasm/attention-split.ts). f32 KV, or f16 KV widened block by block (attention-widen.ts); no sink
 * logits, no ALiBi (the host keeps those on the head-split path). Scores of a part land in its own positions of each
 * head's scores row, so parts never share scratch; each item widens into its own block (item r: block r).
 */
import { POSITION_BLOCK, expRows, maxRow, scoreRows, softcapRows, weightedRows } from './attention';
import { scoreGroupBlock, weightGroupBlock } from './attention-group';
import { widenF16Rows } from './attention-widen';

/**
 * The parameter block of attention_heads (see attention.ts) at `p`, KV kind at 52 (0 f32, 1 f16), the f16 widening
 * scratch at 96, then at 100 nParts and at 104 the address of parts (stats follow parts); items r0 ≤ r < r1.
 */
export function attention_split_heads(p: usize, _x: usize, _out: usize, _k: i32, r0: i32, r1: i32, _n: i32, _s: i32): void {
  const q = <usize>load<u32>(p, 4);
  const k = <usize>load<u32>(p, 8);
  const v = <usize>load<u32>(p, 12);
  const scores = <usize>load<u32>(p, 16);
  const pos = load<i32>(p, 24); // startPos; one row (n = 1)
  const nHeads = load<i32>(p, 28);
  const nKvHeads = load<i32>(p, 32);
  const headDim = load<i32>(p, 36);
  const window = load<i32>(p, 40);
  const scale = load<f32>(p, 44);
  const softcap = load<f32>(p, 48);
  const f16 = load<i32>(p, 52) == 1;
  const widen = <usize>load<u32>(p, 96);
  const nParts = load<i32>(p, 100);
  const parts = <usize>load<u32>(p, 104);
  const stats = parts + <usize>nParts * nHeads * (<usize>headDim << 2);
  const ctx = pos + 1;
  const group = nHeads / nKvHeads;
  const headBytes = <usize>headDim << 2;
  const kvStride = <usize>(nKvHeads * headDim) << (f16 ? 1 : 2);
  const first = window > 0 ? max(0, pos - window + 1) : 0;
  const nBlocks = (pos - first) / POSITION_BLOCK + 1;
  const tiled = ASC_FEATURE_SIMD && (headDim & 3) == 0;
  for (let r = r0; r < r1; r++) {
    const g = r / nParts;
    const j = r % nParts;
    const pa = first + (nBlocks * j / nParts) * POSITION_BLOCK;
    const pb = min(pos, first + (nBlocks * (j + 1) / nParts) * POSITION_BLOCK - 1);
    const ha = g * group;
    const hb = ha + group;
    const outRow = parts + <usize>j * nHeads * headBytes;
    for (let h = ha; h < hb; h++) {
      const st = stats + (<usize>(j * nHeads + h) << 3);
      store<f32>(st, -Infinity);
      store<f32>(st, 0, 4);
      if (pa > pb) for (let c = 0; c < headDim; c++) store<f32>(outRow + <usize>h * headBytes + (<usize>c << 2), 0);
    }
    if (pa > pb) continue; // fewer blocks than parts: this part is empty
    const kvOff = <usize>(g * headDim) << (f16 ? 1 : 2);
    const wb = widen + <usize>r * POSITION_BLOCK * headBytes;
    for (let b = pa; b <= pb; b += POSITION_BLOCK) {
      const e = min(pb, b + POSITION_BLOCK - 1);
      let kB = k + kvOff;
      let kS = kvStride;
      if (f16) {
        widenF16Rows(wb, kB, kvStride, b, e, headDim, pb);
        kB = wb - <usize>b * headBytes;
        kS = headBytes;
      }
      const t = tiled ? scoreGroupBlock(scores, ctx, q, ha, hb, kB, kS, b, e, headDim, scale, f16 ? -1 : pb, p + 80) : b;
      for (let h = ha; h < hb; h++) {
        const sc = scores + (<usize>(h * ctx) << 2);
        if (t <= e) scoreRows(sc, q + <usize>h * headBytes, kB, kS, t, e, headDim, scale, 0);
        if (softcap > 0) softcapRows(sc, b, e, softcap);
      }
    }
    for (let h = ha; h < hb; h++) {
      const sc = scores + (<usize>(h * ctx) << 2);
      const m = maxRow(sc, pa, pb);
      const st = stats + (<usize>(j * nHeads + h) << 3);
      store<f32>(st, m);
      store<f32>(st, expRows(sc, pa, pb, m), 4);
    }
    for (let b = pa; b <= pb; b += POSITION_BLOCK) {
      const e = min(pb, b + POSITION_BLOCK - 1);
      let vB = v + kvOff;
      let vS = kvStride;
      if (f16) {
        widenF16Rows(wb, vB, kvStride, b, e, headDim, pb);
        vB = wb - <usize>b * headBytes;
        vS = headBytes;
      }
      // `pos` −1: no block is the last, so nothing is normalised (inv 1).
      if (tiled) {
        weightGroupBlock(outRow, scores, ctx, ha, hb, vB, vS, b, e, headDim, pa, -1);
        continue;
      }
      for (let h = ha; h < hb; h++) {
        weightedRows(outRow + <usize>h * headBytes, scores + (<usize>(h * ctx) << 2), vB, vS, b, e, headDim, 1, b > pa);
      }
    }
  }
}
