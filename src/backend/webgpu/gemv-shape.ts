/**
 * The work split of the hardware GEMV without subgroups (shaders/kernels/gemv.wgsl): a 64-invocation workgroup covers
 * ROWS rows in row groups of R rows (R = 4 for types with a fast dot_chunk, else 1), each row group's K split over
 * TPG invocations (a power of two, 8 … 64). Long rows get more invocations per row group (about two 32-element chunks
 * or more each); matmuls with few rows get more too (split-K), so a dispatch still launches enough workgroups.
 */

/** Workgroup size of gemv (its WG_SIZE). */
export const GEMV_WG = 64;
/** Invocations per row group: fewest (rows of up to ~32 chunks) and most (one row group per workgroup). */
const MIN_TPG = 8;
const MAX_TPG = GEMV_WG;
/**
 * Workgroups below which a dispatch splits K over more invocations rather than taking more rows per workgroup: a
 * GPU of 100+ compute units needs several workgroups each to keep enough loads in flight (gemv_sg launches 608 for
 * the 0.5B gate·up; 152 here would leave most units with one).
 */
const MIN_WORKGROUPS = 512;

/** One dispatch's split: rows per workgroup (the ROWS override) and invocations per row group. */
interface GemvShape {
  readonly rows: number;
  readonly threadsPerRowGroup: number;
}

/** gemv's split for `nRows` rows of length `k`, `r` rows per row group (gemvSgRowsPerSubgroup of the layout). */
export function gemvShape(nRows: number, k: number, r: number): GemvShape {
  const chunks = Math.ceil(k / 32);
  let tpg = MIN_TPG;
  while (tpg < MAX_TPG && tpg * 4 <= chunks) tpg *= 2; // at least two chunks per invocation
  const rowsOf = (t: number): number => (GEMV_WG / t) * r;
  while (tpg < MAX_TPG && tpg < chunks && Math.ceil(nRows / rowsOf(tpg)) < MIN_WORKGROUPS) tpg *= 2;
  return { rows: rowsOf(tpg), threadsPerRowGroup: tpg };
}
