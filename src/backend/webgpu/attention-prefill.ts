/**
 * Tile sizing of the tiled causal prefill attention kernel (shaders/kernels/attention_prefill.wgsl): how many query
 * rows a workgroup owns and how many cached positions each K/V tile holds, from the head dim, the KV element size
 * and the workgroup memory the device grants. Pure arithmetic, so tests can check every head dim without a GPU.
 */

/** Invocations per prefill-attention workgroup (SwiftShader caps workgroups at 256; 64 suits every adapter). */
export const PREFILL_ATTN_WG_SIZE = 64;
/** Output dims one invocation accumulates at most (4 · the kernel's MAX_D4). */
const MAX_DIMS_PER_INVOCATION = 32;
/** Largest head dim the kernel takes (the decode kernel's cap; 4 · MAX_D4 · WG_SIZE / ROWS allows up to 512). */
const PREFILL_ATTN_MAX_HEAD_DIM = 256;
/** Query rows per workgroup, largest first (each divides the workgroup size). */
const ROW_CHOICES = [64, 32, 16, 8, 4] as const;
/** Positions per K/V tile, largest first (longer tiles waste more of the causal diagonal). */
const KEY_CHOICES = [32, 16, 8, 4] as const;
/** Tiles shorter than this are only taken when nothing longer fits (each tile costs three barriers). */
const MIN_GOOD_KEYS = 8;
/** Workgroups a dispatch should have before split-K stops paying on a GPU (a few per compute unit). */
const TARGET_GROUPS = 256;
/** Shortest split, in K/V tiles (each split re-reads its query rows and writes a partial row). */
const MIN_SPLIT_TILES = 4;
/** Bytes kept free for the kernel's small workgroup variables (the uniform range). */
const SLACK_BYTES = 64;

/** Override constants of one prefill-attention pipeline, and what it costs. */
export interface PrefillAttentionTiles {
  /** Head dim (the HD override). */
  readonly headDim: number;
  /** Query rows per workgroup (ROWS): (token, query head) pairs of one KV head's group. */
  readonly rows: number;
  /** Cached positions per K/V tile (KEYS). */
  readonly keys: number;
  /** Workgroup memory the pipeline declares, in bytes. */
  readonly workgroupBytes: number;
}

/** Workgroup bytes the kernel declares for these tiles (q_sh, k_sh, v_sh, s_sh and the range; see the WGSL). */
export function prefillAttentionBytes(headDim: number, rows: number, keys: number, kvElementBytes: 2 | 4): number {
  const h4 = Math.ceil(headDim / 4); // vec4s per head row
  const q = rows * (h4 + 1) * 16; // (ROWS, H4 + 1) vec4<f32>
  const k = keys * (h4 + 1) * 4 * kvElementBytes; // (KEYS, H4 + 1) vec4<F>
  const v = keys * h4 * 4 * kvElementBytes; // (KEYS, H4) vec4<F>
  const s = rows * (keys + 1) * 4; // (ROWS, KEYS + 1) f32
  // Each array is rounded up to 16 bytes (alignment of the next one) and the vec2<u32> range adds 8.
  return [q, k, v, s].reduce((sum, b) => sum + Math.ceil(b / 16) * 16, 0) + 16;
}

/**
 * Picks the tiles for one head dim: the most query rows a workgroup can serve (each invocation holds at most 32
 * output dims, and there is no point in more rows than `queryRows`, the step's n·group), then the longest K/V tile
 * that fits `workgroupLimit` bytes. Returns null when the head dim is out of range or nothing fits (the caller then
 * uses the per-row decode kernel).
 */
export function planPrefillAttention(
  headDim: number,
  queryRows: number,
  kvElementBytes: 2 | 4,
  workgroupLimit: number,
): PrefillAttentionTiles | null {
  if (!Number.isInteger(headDim) || headDim < 1 || headDim > PREFILL_ATTN_MAX_HEAD_DIM) return null;
  const budget = workgroupLimit - SLACK_BYTES;
  let fallback: PrefillAttentionTiles | null = null;
  for (const rows of ROW_CHOICES) {
    const perRow = PREFILL_ATTN_WG_SIZE / rows;
    if (headDim > MAX_DIMS_PER_INVOCATION * perRow) continue;
    if (rows > ROW_CHOICES[ROW_CHOICES.length - 1]! && rows / 2 >= queryRows) continue; // half the rows would idle
    for (const keys of KEY_CHOICES) {
      const bytes = prefillAttentionBytes(headDim, rows, keys, kvElementBytes);
      if (bytes > budget) continue;
      const tiles = { headDim, rows, keys, workgroupBytes: bytes };
      if (keys >= MIN_GOOD_KEYS) return tiles;
      fallback ??= tiles;
      break;
    }
  }
  return fallback;
}

/** Workgroup grid of a prefill-attention dispatch: (row tiles, KV heads, 1). */
export function prefillAttentionGrid(
  tiles: PrefillAttentionTiles,
  n: number,
  nHeads: number,
  nKvHeads: number,
): [number, number, number] {
  return [Math.ceil((n * (nHeads / nKvHeads)) / tiles.rows), nKvHeads, 1];
}

/**
 * Split-K factor for a GPU: enough splits of the cached positions to bring `groups` workgroups (row tiles × KV heads)
 * up to a few per compute unit, each split at least MIN_SPLIT_TILES tiles long, at most `maxSplits` (what the
 * partial buffer holds). 1 for a full prefill chunk, more for a few tokens after a long prefix.
 */
export function prefillAttentionSplits(groups: number, kvLen: number, keys: number, maxSplits: number): number {
  const wanted = Math.ceil(TARGET_GROUPS / Math.max(1, groups));
  const byLength = Math.floor(kvLen / (MIN_SPLIT_TILES * keys));
  return Math.max(1, Math.min(wanted, byLength, maxSplits));
}
