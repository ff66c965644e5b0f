/**
 * The records of a gated DeltaNet layer (qwen35, `Ops.deltaNet`): its geometry, the per-step projections it mixes
 * and its small weights. The host implementation is `delta-net.ts`, the WebGPU one `webgpu/delta-net-ops.ts`.
 */

import type { Activation, Weight } from './ops.js';

/** Geometry of a gated DeltaNet layer (qwen35: `ssm.conv_kernel`, `ssm.state_size`, `ssm.group_count`, `ssm.time_step_rank`). */
export interface DeltaNetDims {
  /** Taps of the conv1d. */
  readonly convWidth: number;
  /** Key head size and count (q and k heads). */
  readonly headK: number;
  readonly nKHeads: number;
  /** Value head size and count (a multiple of nKHeads; head h reads key head h mod nKHeads). */
  readonly headV: number;
  readonly nVHeads: number;
}

/** The per-step projections a DeltaNet layer mixes (read once: host backends turn alpha and beta into gates in place). */
export interface DeltaNetInputs {
  readonly mixed: Activation; // [n, 2·nKHeads·headK + nVHeads·headV] q | k | v
  readonly z: Activation; // [n, nVHeads·headV] output gate
  readonly beta: Activation; // [n, nVHeads]
  readonly alpha: Activation; // [n, nVHeads]
  /** Scratch of the conv1d output ([n, 2·nKHeads·headK + nVHeads·headV]). */
  readonly conv: Activation;
}

/** The small weights of a DeltaNet layer (its projections are matmuls of the forward pass). */
export interface DeltaNetWeights {
  readonly dims: DeltaNetDims;
  readonly conv: Weight; // [convDim rows, convWidth]
  readonly dtBias: Weight; // [nVHeads]
  readonly a: Weight; // [nVHeads]
  readonly norm: Weight; // [headV]
}
