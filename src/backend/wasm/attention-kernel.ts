/**
 * One attention call of the WASM kernels: the parameter block the AssemblyScript kernels read (written field by
 * field into the heap, no array per call), then `attention_heads` (f32 KV) or `attention_kv_heads` (f16 / Q8_0 /
 * Q4_0 KV read in place), split across threads by head when the work is large enough. Non-causal attention runs each
 * row alone at the sequence's last position. ALiBi (jina-bert-v2) is in the f32 kernel: the slopes follow the
 * parameter block, and each row's own position reaches the kernel as its shift from where it is placed.
 */

import { LlmError } from '../../errors.js';
import { alibiSlopes } from '../alibi.js';
import type { AttentionParams } from '../ops.js';
import type { KernelExports } from './kernel-exports.js';
import { runSplit, splitParts, splitScratchBytes } from './attention-split.js';
import { widenBytes, widenKv, widenRange } from './attention-widen.js';
import type { ThreadPool } from './thread-pool.js';
import type { WasmHeap } from './wasm-heap.js';

/**
 * Attention splits across threads from this many multiply-adds (heads × rows × head width × positions): its per-head
 * work is f32 SIMD over a cache-resident KV, so it pays off earlier than a matvec streaming weights (2-thread decode
 * of Qwen2.5-0.5B at 128–192 positions: attention 1.27 → 0.89–1.03 ms per token).
 */
const MIN_PARALLEL_ATTENTION = 1 << 15;

/**
 * Where an attention call's operands are (byte offsets into the heap) and its geometry. The backend keeps one record
 * and refills it per call (attention runs per layer per token: no object per call).
 */
export interface AttentionCall {
  out: number; // [n, outCols] f32
  outCols: number;
  q: number; // n rows of qStride bytes (f32, or Q8_0 blocks for quantized KV)
  qStride: number;
  k: number;
  v: number;
  /** The kernel's KV kind: 0 f32, 1 f16, 2 q8_0, 3 q4_0. */
  kind: number;
  /** Byte address of the per-head sink logits (f32 [nHeads], gpt-oss), or 0 for none. */
  sinks: number;
  n: number;
  startPos: number;
  params: AttentionParams;
}

/**
 * Bytes of the parameter block: 20 words (17–19: the window pair kernel's key ranges), 80 bytes, then 16 bytes the f32 kernel writes (its read-ahead's
 * scratch, wasm/assembly/attention-group.ts), then at 96 the f16 widening scratch's address and 12 unused bytes; the
 * ALiBi slopes f32 [nHeads] follow it.
 */
const PARAM_BYTES = 112;

/** Positions per block of the kernels' grouped passes (POSITION_BLOCK of wasm/assembly/attention.ts). */
const POSITION_BLOCK = 128;

/** Byte offset of the f16 widening scratch after a call's scores of `nHeads` × `ctx` (64-byte aligned). */
function widenOffset(nHeads: number, ctx: number): number {
  return Math.ceil((nHeads * ctx * 4 + PARAM_BYTES + nHeads * 4) / 64) * 64;
}

/** Byte offset of the split path's partial results (attention-split.ts) after a call's widening scratch. */
function partsOffset(p: AttentionParams, ctx: number, kind: number): number {
  return widenOffset(p.nHeads, ctx) + (kind === 1 ? p.nHeads * POSITION_BLOCK * p.headDim * 4 : 0);
}

/**
 * Scratch bytes of one call with KV kind `kind` (0 f32, 1 f16, 2 q8_0, 3 q4_0): the scores [nHeads, ctx] f32, the
 * parameter block, the ALiBi slopes [nHeads] f32; for f16 KV the widening scratch f32 [nHeads, POSITION_BLOCK,
 * headDim] (one block of widened K or V rows per chunk of heads, the chunk starting at head (or split item) h using
 * block h: threads never share one); then the split path's partial results for up to a group's count of parts; then,
 * for f16 KV whose copy fits in cache, the call's `n` rows' widened K and V (attention-widen.ts).
 */
export function attentionScratchBytes(p: AttentionParams, ctx: number, kind: number, n = 1): number {
  const range = widenRange(p, kind, ctx - n, n);
  return widenedOffset(p, ctx, kind) + (range.rows > 0 ? widenBytes(p, range.rows) : 0);
}

/** Byte offset of a call's widened f16 K/V (attention-widen.ts) after the split path's partials (64-aligned). */
function widenedOffset(p: AttentionParams, ctx: number, kind: number): number {
  return (
    Math.ceil((partsOffset(p, ctx, kind) + splitScratchBytes(p.nHeads, p.headDim, p.nHeads / p.nKvHeads)) / 64) * 64
  );
}

/** A call record with placeholder operands, for a backend to refill per call. */
export function emptyAttentionCall(): AttentionCall {
  const params = { nHeads: 1, nKvHeads: 1, headDim: 1, scale: 1, slidingWindow: 0, softcap: 0 };
  return { out: 0, outCols: 0, q: 0, qStride: 0, k: 0, v: 0, kind: 0, sinks: 0, n: 0, startPos: 0, params };
}

/** The last slopes computed (per layer and pass the same few head counts): [nHeads, maxBias, slopes]. */
let slopesCache: [number, number, Float32Array] = [0, 0, new Float32Array(0)];

/** ggml's ALiBi slopes of `nHeads` heads for `maxBias`, f32 [nHeads] (cached). */
function slopesOf(nHeads: number, maxBias: number): Float32Array {
  if (slopesCache[0] !== nHeads || slopesCache[1] !== maxBias)
    slopesCache = [nHeads, maxBias, alibiSlopes(nHeads, maxBias)];
  return slopesCache[2];
}

/**
 * Runs one attention call; `scores` is scratch of attentionScratchBytes(params, startPos + n, kind, n):
 * [nHeads, startPos + n] f32, then the parameter block, the ALiBi slopes, f16 KV's widening blocks, the split's
 * partials, the call's widened f16 K and V.
 */
export function runAttentionKernel(
  heap: WasmHeap,
  k: KernelExports,
  pool: ThreadPool | null,
  scores: number,
  c: AttentionCall,
): void {
  const { nHeads, nKvHeads, headDim } = c.params;
  const ctx = c.startPos + c.n;
  const alibi = c.params.alibiMaxBias ?? 0;
  if (alibi && (c.kind !== 0 || c.sinks !== 0)) {
    throw new LlmError(
      'unsupported-type',
      'attention with ALiBi (jina-bert-v2) runs on an f32 KV cache only on the wasm backend; load the model without kvType',
    );
  }
  const p = scores + nHeads * ctx * 4;
  const i32 = heap.i32;
  const f32 = heap.f32;
  const at = p >>> 2;
  i32[at] = c.out;
  i32[at + 1] = c.q;
  i32[at + 2] = c.k;
  i32[at + 3] = c.v;
  i32[at + 4] = scores;
  i32[at + 5] = c.n;
  i32[at + 6] = c.startPos;
  i32[at + 7] = nHeads;
  i32[at + 8] = nKvHeads;
  i32[at + 9] = headDim;
  // A window wider than the whole sequence masks nothing: drop it (the same keys in the same order, so the same
  // result), which lets non-causal rows take the pair kernel (EmbeddingGemma's inputs up to half its window).
  const last = c.startPos + c.n - 1;
  const w0 = c.params.slidingWindow;
  const window = w0 > 0 && (c.params.symmetricWindow === true ? last > Math.floor(w0 / 2) : last >= w0) ? w0 : 0;
  i32[at + 10] = window;
  f32[at + 11] = c.params.scale;
  f32[at + 12] = c.params.softcap;
  i32[at + 13] = c.kind;
  i32[at + 14] = c.sinks;
  i32[at + 15] = alibi ? p + PARAM_BYTES : 0; // f32 [nHeads] slopes, 0 = none
  i32[at + 16] = 0; // the rows' shift from their placed position to their own (non-causal rows below)
  // f16 KV: the widening scratch of the grouped path (sized by attentionScratchBytes with headDim), 0 = none.
  i32[at + 24] = c.kind === 1 && c.sinks === 0 ? scores + widenOffset(nHeads, ctx) : 0;
  // f16 KV while the f32 copy fits in cache: K and V widened once for the call's rows, then the f32 kernel
  // (attention-widen.ts); otherwise the grouped f16 path below.
  let kind = c.kind;
  const range = widenRange(c.params, kind, c.startPos, c.n);
  const widened =
    range.rows > 0 ? widenKv(k, pool, c.params, c.k, c.v, scores + widenedOffset(c.params, ctx, kind), range) : null;
  if (widened) {
    i32[at + 2] = widened[0];
    i32[at + 3] = widened[1];
    kind = 0;
    i32[at + 13] = kind;
  }
  if (alibi) f32.set(slopesOf(nHeads, alibi), (p + PARAM_BYTES) >>> 2);
  const work = nHeads * c.n * headDim * (window > 0 ? Math.min(ctx, window) : ctx);
  const name = kind === 0 ? 'attention_heads' : 'attention_kv_heads';
  const parallel = pool !== null && nHeads >= 2 && work >= MIN_PARALLEL_ATTENTION;
  if (c.params.causal !== false) {
    // A decode row with fewer KV heads than threads: positions split across threads instead (attention-split.ts).
    // (A kernel build older than this host, e.g. the baseline of test/bench/attention-long.bench.ts, has no split kernel.)
    const splittable =
      pool !== null &&
      c.n === 1 &&
      kind <= 1 &&
      c.sinks === 0 &&
      !alibi &&
      nHeads % nKvHeads === 0 &&
      typeof k.attention_split_heads === 'function';
    const positions = window > 0 ? Math.min(ctx, window) : ctx;
    const parts = splittable ? splitParts(nKvHeads, pool.nThreads, positions, nHeads / nKvHeads) : 0;
    if (parts > 0 && pool) {
      runSplit(heap, k, pool, p, c.out, scores + partsOffset(c.params, ctx, c.kind), parts, nHeads, nKvHeads, headDim);
      return;
    }
    runHeads(k, pool, name, p, nHeads, nKvHeads, parallel);
    return;
  }
  // Non-causal: each row alone, placed at the sequence's last position, so it sees all of it (the kernel's mask is
  // causal; positions enter attention only through the mask); a window widened by the row's distance from there
  // still masks the keys pos − k ≥ window of the row's own position (llama.cpp's SWA mask). With `symmetricWindow`
  // (llama.cpp's symmetric SWA: |pos − k| ≤ ⌊window / 2⌋) the row is placed at the last key it sees, the window
  // reaching back to the first one.
  const sym = c.params.symmetricWindow === true && window > 0;
  const half = Math.floor(window / 2);
  i32[at + 5] = 1;
  const row = (i: number): void => {
    const pos = c.startPos + i;
    const to = sym ? Math.min(last, pos + half) : last;
    i32[at + 6] = to;
    i32[at + 10] = sym ? to - Math.max(0, pos - half) + 1 : window > 0 ? window + (last - pos) : 0;
    i32[at + 16] = pos - to;
    i32[at] = c.out + i * c.outCols * 4;
    i32[at + 1] = c.q + i * c.qStride;
  };
  const only = c.params.onlyRow;
  if (only !== undefined && only >= 0 && only < c.n) {
    // One row wanted (the pooled row of an encoder's last layer): it alone, every head, as below.
    row(only);
    runHeads(k, pool, name, p, nHeads, nKvHeads, parallel);
    return;
  }
  if (!parallel) {
    // One thread: head by head, every row, so the head's K/V rows stay in cache across the rows (a 4096-patch image
    // reads 1.2 MB of them per row and head, out of 19 MB for all heads). The same work per (row, head); rows go in
    // pairs sharing each K/V load where the pair kernel applies (its second scores row is the next head's, free here).
    const cols = nHeads * headDim;
    const pairs = kind === 0 && c.params.softcap === 0 && c.sinks === 0 && !alibi && nHeads >= 2 && headDim % 4 === 0;
    const paired = pairs && c.qStride === cols * 4 && c.outCols === cols ? 2 : 1;
    // Windowed rows (EmbeddingGemma's sliding layers) pair too, each row with its own key range.
    const pairKernel = window > 0 ? k.attention_pair_window_heads : k.attention_pair_heads;
    for (let h = 0; h < nHeads; h++) {
      let i = 0;
      for (; i + paired <= c.n; i += paired) {
        row(i);
        if (paired === 2 && window > 0) windowPair(i32, at, row, i);
        (paired === 2 ? pairKernel : k[name])(p, 0, 0, 0, h, h + 1, 0, 0);
      }
      for (; i < c.n; i++) {
        row(i);
        k[name](p, 0, 0, 0, h, h + 1, 0, 0);
      }
    }
    return;
  }
  for (let i = 0; i < c.n; i++) {
    row(i);
    runHeads(k, pool, name, p, nHeads, nKvHeads, parallel);
  }
}

/**
 * The key ranges of rows i and i + 1 for attention_pair_window_heads, from what `row` writes for each (its last key in
 * word 6, its window in word 10: first = max(0, last − window + 1)); leaves row i's operands in place.
 */
function windowPair(i32: Int32Array, at: number, row: (i: number) => void, i: number): void {
  row(i + 1);
  const l1 = i32[at + 6]!;
  const f1 = Math.max(0, l1 - i32[at + 10]! + 1);
  row(i);
  i32[at + 17] = Math.max(0, i32[at + 6]! - i32[at + 10]! + 1);
  i32[at + 18] = i32[at + 6]!;
  i32[at + 19] = f1;
  i32[at + 6] = l1;
}

/**
 * One kernel call over every head (split across the pool's threads when `parallel`), parameter block at `p`. With
 * at least as many KV heads as threads the chunks are whole GQA groups: the f32 kernel reads a KV head's rows once
 * for its whole group, so a group split between two chunks streams them twice (Qwen2.5-0.5B, 14 heads over 2 KV
 * heads, 2 threads: 2 chunks of 7 heads instead of 4 of 3–4).
 */
function runHeads(
  k: KernelExports,
  pool: ThreadPool | null,
  name: 'attention_heads' | 'attention_kv_heads',
  p: number,
  nHeads: number,
  nKvHeads: number,
  parallel: boolean,
): void {
  if (!parallel || !pool) {
    k[name](p, 0, 0, 0, 0, nHeads, 0, 0);
    return;
  }
  const group = nHeads % nKvHeads === 0 && nKvHeads >= pool.nThreads ? nHeads / nKvHeads : 1;
  pool.dispatch(name, k[name], p, 0, 0, 0, 0, 0, nHeads, group);
}
