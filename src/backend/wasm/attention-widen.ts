/**
 * Attention over an f16 KV cache on the WASM backend, widened first: before a call's query rows (a decode row or a
 * prefill batch), the layer's f16 K and V rows they can see are widened once into f32 scratch
 * (wasm/assembly/attention-widen.ts's widen_f16_rows: one sequential pass over the layer's rows, split across the
 * pool's threads) and the call then runs the f32 kernel (attention_heads) over that copy. The grouped f16 path widens
 * each 128-position block of one KV head into L1 instead, strided over the interleaved KV heads, and again for every
 * row of a batch: Qwen2.5-0.5B's geometry at 4,096 positions, widened first measured −14 to −17 % CPU for a decode
 * row and −17 % for a 64-row batch (then within 4 % of f32 KV). While the copy stays in cache, that is: a copy larger
 * than a last-level cache is streamed from memory at twice the f16 bytes (14 KV heads × 64, 29 MiB: decode +30 %), so
 * larger calls keep the grouped path. The f32 kernel on the widened values computes exactly what the grouped f16 path
 * computes (its widening gives the same f32 values and its passes are the f32 ones).
 */

import type { AttentionParams } from '../ops.js';
import type { KernelExports } from './kernel-exports.js';
import type { ThreadPool } from './thread-pool.js';

/** Rows from which a call counts as a batch for WIDEN_MAX_BYTES (each row reads the copy again: more to amortise). */
const WIDEN_BATCH_ROWS = 4;

/**
 * Most bytes of the widened K and V (f32, 2 × positions × KV width) for a call of fewer than WIDEN_BATCH_ROWS rows,
 * then for a batch: about what stays in a last-level cache (measured at 4,096 positions: 4 MiB −14 % decode CPU,
 * 14 MiB −5 % decode and −9 % for 16 rows, 29 MiB +30 % decode and +5 % for 8 rows, against the grouped path).
 */
const WIDEN_MAX_BYTES = [8 << 20, 16 << 20] as const;

/** Positions of a call of `n` rows at startPos whose f16 K/V it widens (the first position any row sees … the last). */
interface WidenRange {
  /** First position any row of the call sees (0, or the sliding window's start for its first row). */
  first: number;
  /** Positions widened (first … startPos + n − 1), 0 when the call keeps the grouped f16 path. */
  rows: number;
}

/**
 * Which positions a causal call of `n` rows at `startPos` over KV kind `kind` (1 = f16) widens first, or rows 0 when
 * it keeps the grouped f16 path (not f16, non-causal, over WIDEN_MAX_BYTES). Sink logits (gpt-oss) widen too: the f32
 * kernel runs them head by head over the copy, where the f16 kernel would dot each head with the f16 rows itself.
 */
export function widenRange(p: AttentionParams, kind: number, startPos: number, n: number): WidenRange {
  if (kind !== 1 || p.causal === false) return NO_WIDENING;
  const first = p.slidingWindow > 0 ? Math.max(0, startPos - p.slidingWindow + 1) : 0;
  const rows = startPos + n - first;
  return widenBytes(p, rows) <= WIDEN_MAX_BYTES[n < WIDEN_BATCH_ROWS ? 0 : 1] ? { first, rows } : NO_WIDENING;
}

/** The range of a call that keeps the grouped f16 path (one shared object: no allocation per call). */
const NO_WIDENING: Readonly<WidenRange> = Object.freeze({ first: 0, rows: 0 });

/** Scratch bytes of the widened K then V of `rows` positions: f32 [rows, nKvHeads·headDim] each. */
export function widenBytes(p: AttentionParams, rows: number): number {
  return 2 * rows * p.nKvHeads * p.headDim * 4;
}

/**
 * Widens positions first … first + rows − 1 of the f16 K and V at `k` / `v` (f16 [positions, nKvHeads·headDim]) into
 * f32 at `dst` (K [rows, kvCols] then V [rows, kvCols]) and returns the addresses of position 0's K and V rows as the
 * f32 kernel reads them (row t at base + t·kvCols·4; below `dst` when first > 0: never read there). Returns null when
 * the kernel build has no widen_f16_rows (an older build, e.g. a bench baseline).
 */
export function widenKv(
  k: KernelExports,
  pool: ThreadPool | null,
  p: AttentionParams,
  kAt: number,
  vAt: number,
  dst: number,
  range: WidenRange,
): [number, number] | null {
  if (typeof k.widen_f16_rows !== 'function') return null;
  const cols = p.nKvHeads * p.headDim;
  const shift = range.first * cols; // values before the first widened row
  const kDst = dst - shift * 4;
  const vDst = dst + range.rows * cols * 4 - shift * 4;
  widenRows(k, pool, kAt + shift * 2, kDst + shift * 4, cols, range.rows);
  widenRows(k, pool, vAt + shift * 2, vDst + shift * 4, cols, range.rows);
  return [kDst, vDst];
}

/** `rows` f16 rows of `cols` values at `src` (row r at src + r·cols·2) widened to f32 at `out` (out + r·cols·4). */
function widenRows(
  k: KernelExports,
  pool: ThreadPool | null,
  src: number,
  out: number,
  cols: number,
  rows: number,
): void {
  const widen = k.widen_f16_rows;
  if (pool && rows >= 64) pool.dispatch('widen_f16_rows', widen, 0, src, out, cols, 0, 0, rows, 32);
  else widen(0, src, out, cols, 0, rows, 0, 0);
}
