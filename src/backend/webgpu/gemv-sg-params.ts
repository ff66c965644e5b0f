/**
 * The uniform block of the hardware GEMV (shaders/common/gemv_io.wgsl `struct Params`, shared by gemv and gemv_sg), written by field name in
 * the order declared here; test/kernels/webgpu-shader-interface.test.ts checks this order and the field types
 * against the WGSL, so a reordered or renamed field fails a unit test instead of computing garbage.
 */

import type { ParamsWriter } from './step-recorder.js';

/**
 * Workgroup size of gemv_sg and rows per workgroup (its ROWS override). Each subgroup dots R = 4 rows (the WGSL's
 * `R` override) with every chunk of x, so a 32-wide subgroup of a 64-lane workgroup covers one row group of 4 rows;
 * narrower subgroups split K (lavapipe's 8 lanes: 4 subgroups per row group).
 */
export const GEMV_SG_WG = 64;
export const GEMV_SG_ROWS = 8;
/** gemv_sg's R override for types with a fast dot_chunk (registry `webgpu.chunkDot`); 1 for the others. */
export const GEMV_SG_ROWS_PER_SUBGROUP = 4;

/** Workgroup size of gemv_sg for matmuls with few, long rows (see gemvSgWorkgroupSize). */
export const GEMV_SG_WG_SPLIT_K = 256;

/**
 * gemv_sg's workgroup size for a matmul of `rows` rows of length `k`: 256 lanes (eight 32-wide subgroups for the two
 * row groups: each row group's K split four ways, partials summed in workgroup memory) when the rows are few
 * (< 4096: the down projections of the 0.5B–3B shapes) and long enough for four subgroups of 32 lanes to each take
 * whole 32-element chunks (k ≥ 4096); 64 otherwise.
 */
export function gemvSgWorkgroupSize(rows: number, k: number): number {
  return rows < 4096 && k >= 4096 ? GEMV_SG_WG_SPLIT_K : GEMV_SG_WG;
}

/** gemv_sg's Params fields in declaration order; `eps` is the one f32. */
export const GEMV_SG_PARAMS = [
  'k',
  'n_rows',
  'row_stride',
  'x_stride',
  'out_stride',
  'out_offset',
  'has_bias',
  'x_offset',
  'eps',
  'split1',
  'split2',
  'out1_stride',
  'out2_stride',
  'w_base1',
  'w_base2',
] as const;

/** Fields of gemv_sg's Params that are f32 (the rest are u32). */
export const GEMV_SG_F32_PARAMS: ReadonlySet<string> = new Set(['eps']);

/** Values of every gemv_sg Params field. */
export type GemvSgParams = Readonly<Record<(typeof GEMV_SG_PARAMS)[number], number>>;

/** Writes `v` into a dispatch's uniform block in declaration order. */
export function writeGemvSgParams(p: ParamsWriter, v: GemvSgParams): void {
  for (const name of GEMV_SG_PARAMS) {
    if (GEMV_SG_F32_PARAMS.has(name)) p.f(v[name]);
    else p.u(v[name]);
  }
}
