/**
 * Decode attention with positions split across threads (flash-decoding style) when a model has fewer KV heads than
 * the pool has threads: the head split (attention-kernel.ts) cuts whole GQA groups, so with one KV head and two
 * threads one of them would idle (and cutting a group instead makes every chunk stream the KV head's rows again).
 * Each item (KV head, part of the positions) runs wasm/assembly/attention-split.ts's kernel, which leaves per head an
 * unnormalised partial output with its score maximum and exponential sum; `combineParts` merges them here.
 */

import type { KernelExports } from './kernel-exports.js';
import type { ThreadPool } from './thread-pool.js';
import type { WasmHeap } from './wasm-heap.js';

/**
 * Positions (after the sliding window) from which a row is split: below, one group's work per thread is too short
 * for the partial results' combine and the extra dispatch to pay.
 */
const MIN_SPLIT_POSITIONS = 512;

/** Positions per part boundary (POSITION_BLOCK of wasm/assembly/attention.ts: parts are whole blocks). */
const POSITION_BLOCK = 128;

/** Bytes of the partial results for `nHeads` heads of `headDim` over at most `maxParts` parts: parts then stats. */
export function splitScratchBytes(nHeads: number, headDim: number, maxParts: number): number {
  return maxParts * nHeads * (headDim + 2) * 4;
}

/**
 * How many parts to cut a decode row's `positions` into (0: no split): a few per thread beyond the KV heads, so a
 * thread that starts late still finds work, at most `maxParts` (the group size, which bounds the scratch) and never
 * more than the blocks there are.
 */
export function splitParts(nKvHeads: number, nThreads: number, positions: number, maxParts: number): number {
  if (nKvHeads >= nThreads || positions < MIN_SPLIT_POSITIONS) return 0;
  const parts = Math.min(maxParts, Math.ceil((2 * nThreads) / nKvHeads), Math.ceil(positions / POSITION_BLOCK));
  return parts >= 2 ? parts : 0;
}

/**
 * Runs the split kernel over every (KV head, part) with the parameter block at `p` already filled (attention_heads'
 * fields, the KV kind, the widening scratch), then combines the parts into the row `out` (f32 [nHeads·headDim]):
 *   out_h = Σ_j e^(m_j − M) · parts_j,h / Σ_j e^(m_j − M) · sum_j,h,  M = max_j m_j,h
 * `partsAt` is scratch of splitScratchBytes(nHeads, headDim, nParts).
 */
export function runSplit(
  heap: WasmHeap,
  k: KernelExports,
  pool: ThreadPool,
  p: number,
  out: number,
  partsAt: number,
  nParts: number,
  nHeads: number,
  nKvHeads: number,
  headDim: number,
): void {
  heap.i32[(p + 100) >>> 2] = nParts;
  heap.i32[(p + 104) >>> 2] = partsAt;
  pool.dispatch('attention_split_heads', k.attention_split_heads, p, 0, 0, 0, 0, 0, nKvHeads * nParts, 1);
  combineParts(heap.f32, out >>> 2, partsAt >>> 2, nParts, nHeads, headDim);
}

/** See runSplit: parts f32 [nParts, nHeads, headDim] at index `at`, then stats f32 [nParts, nHeads, 2] (m, sum). */
function combineParts(f32: Float32Array, o: number, at: number, nParts: number, nHeads: number, headDim: number): void {
  const stats = at + nParts * nHeads * headDim;
  for (let h = 0; h < nHeads; h++) {
    let m = -Infinity;
    for (let j = 0; j < nParts; j++) m = Math.max(m, f32[stats + 2 * (j * nHeads + h)]!);
    let sum = 0;
    for (let j = 0; j < nParts; j++) {
      const s = stats + 2 * (j * nHeads + h);
      sum += Math.exp(f32[s]! - m) * f32[s + 1]!;
    }
    const oh = o + h * headDim;
    for (let c = 0; c < headDim; c++) f32[oh + c] = 0;
    for (let j = 0; j < nParts; j++) {
      const w = Math.exp(f32[stats + 2 * (j * nHeads + h)]! - m) / sum;
      if (w === 0) continue; // an empty part (m −∞) or one whose every score is far below the maximum
      const ph = at + (j * nHeads + h) * headDim;
      for (let c = 0; c < headDim; c++) f32[oh + c] = f32[oh + c]! + w * f32[ph + c]!;
    }
  }
}
