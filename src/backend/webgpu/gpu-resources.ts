/**
 * The WebGPU backend's resources behind the `Weight` and `Activation` handles of `Ops` (shared by webgpu-ops.ts and
 * hardware-gemv.ts).
 */

import type { Activation, Weight } from '../ops.js';
import type { Binding } from './step-recorder.js';
import type { GpuQuantLayout } from './upload.js';
import type { WeightGroupKind } from './weight-groups.js';

/** A weight on the GPU: whole rows split into parts that each fit one storage binding. */
export interface GpuWeight extends Weight {
  readonly layout: GpuQuantLayout;
  /** u32 words per repacked row. */
  readonly rowStride: number;
  /** Filled at upload (for a grouped weight: once its whole group is uploaded). */
  parts: { readonly buffer: Binding; readonly rowStart: number; readonly nRows: number }[];
  /** 1-D tensors: the values as f32 (norm weights, biases). */
  readonly vector: GPUBuffer | null;
  /** 1-D tensors: the same values on the host (biases concatenated for the fused Q|K|V GEMV). */
  readonly host: Float32Array | null;
  /** The group whose buffer holds this weight's rows (hardware kernels; see weight-groups.ts), else null. */
  group: GpuWeightGroup | null;
}

/** Weights uploaded into one buffer, each at an aligned offset (see weight-groups.ts). */
export interface GpuWeightGroup {
  readonly kind: WeightGroupKind;
  readonly buffer: GPUBuffer;
  readonly members: readonly GpuWeight[];
  /** Word offset of each member's first row in `buffer`. */
  readonly wordBase: readonly number[];
}

/** An activation on the GPU. */
export interface GpuActivation extends Activation {
  readonly buffer: GPUBuffer; // (maxRows, cols) f32
}
