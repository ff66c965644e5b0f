/**
 * The WASM backend's row add for gpt-oss's per-expert biases (`hostAddExpertBias`, src/backend/expert-bias.ts): each
 * (token, slot) row of an expert matmul's output gets its expert's bias row through the SIMD `add_rows` kernel
 * (wasm/assembly/row-ops.ts, f32 lane by lane: the same sums as the plain-TS loop) instead of a JS loop per value —
 * three such adds of 4 × 1024 values per layer were ≈ 4 % of a gpt-oss-a0.2b decode token.
 */

import type { AddRow } from '../expert-bias.js';
import type { KernelExports } from './kernel-exports.js';

/** An `AddRow` over the heap's f32 indices, or null for a build without `add_rows` (the plain-TS loop then runs). */
export function wasmAddRow(k: KernelExports): AddRow | null {
  const add = k.add_rows;
  if (!add) return null;
  return (o, b, len) => add.call(k, o * 4, o * 4, b * 4, len); // byte addresses (× 4, not << 2: heaps past 2 GiB)
}
