/**
 * The memory plan: GPU bytes for weights (as repacked), KV cache and activations, computed from metadata alone
 * before any download and checked against the device limits (and an optional byte budget). A plan that cannot
 * fit fails early with LlmError('out-of-memory'), the numbers, and the longest context that would fit.
 */

import { LlmError } from '../../errors.js';
import type { GgmlType } from '../../gguf/types.js';
import type { KvLayerSpec } from '../ops.js';
import { getGpuQuantLayout, rowBytes as layoutRowBytes } from './upload.js';

/** What the plan needs to know about a model and a run. */
export interface MemoryPlanInput {
  /** Every tensor to upload (GGUF tensor infos fit). */
  readonly tensors: readonly { readonly name: string; readonly type: GgmlType; readonly shape: readonly number[] }[];
  /** KV geometry of each layer (the model's `kvLayersOf`); a layer with 0 KV heads holds no cache. */
  readonly kvLayers: readonly KvLayerSpec[];
  readonly contextLength: number;
  /** Sequences kept in the KV cache (default 1). */
  readonly nSlots?: number;
  /** Bytes per KV element: 2 on the f16 path, 4 on the f32 path. */
  readonly kvBytesPerElement: 2 | 4;
  /** Bytes of all activation buffers (the model's plan; default 0). */
  readonly activationBytes?: number;
  /**
   * The kernel set whose weight layouts to count (WebGpuOps.kernelSet); default 'software', whose re-coded Q5_K/Q6_K
   * blocks are the larger: the conservative estimate.
   */
  readonly kernels?: 'hardware' | 'software';
}

/** The device numbers the plan is checked against. */
export interface MemoryLimits {
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
  /** Total bytes the caller allows (WebGPU does not report device memory); omit for no total check. */
  readonly budgetBytes?: number;
}

/** The result of a plan that fits. */
export interface MemoryPlan {
  readonly weightBytes: number;
  /** K and V, all layers and slots. */
  readonly kvBytes: number;
  /** The largest layer's K (or V) buffer. */
  readonly kvLayerBytes: number;
  readonly activationBytes: number;
  readonly totalBytes: number;
  /** Longest context that fits the limits (≥ contextLength when the plan fits). */
  readonly maxContextLength: number;
}

const MiB = (b: number): string => `${(b / 1048576).toFixed(1)} MiB`;

/**
 * Plans GPU memory for `input` under `limits`.
 * @throws LlmError('out-of-memory') when a buffer or the total cannot fit; the message suggests a context length.
 * @throws LlmError('unsupported-type') for a tensor type the WebGPU backend cannot run.
 */
export function planMemory(input: MemoryPlanInput, limits: MemoryLimits): MemoryPlan {
  const nSlots = input.nSlots ?? 1;
  let weightBytes = 0;
  for (const t of input.tensors) {
    const l = getGpuQuantLayout(t.type, t.name, input.kernels);
    const rowLength = t.shape[0] ?? 1;
    const nRows = t.shape.slice(1).reduce((a, b) => a * b, 1);
    const rowBytes = t.shape.length === 1 ? rowLength * 4 : layoutRowBytes(l, rowLength);
    if (rowBytes > limits.maxStorageBufferBindingSize) {
      throw new LlmError(
        'out-of-memory',
        `planning GPU memory: one row of ${t.name} is ${MiB(rowBytes)}, over the storage binding limit of ` +
          `${MiB(limits.maxStorageBufferBindingSize)}; this model cannot run on this device's WebGPU`,
        { details: { tensor: t.name, rowBytes, maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize } },
      );
    }
    const expertBytes = t.shape.length === 3 ? rowBytes * (t.shape[1] ?? 1) : 0; // one expert of a 3-D stack
    if (expertBytes > limits.maxStorageBufferBindingSize) {
      throw new LlmError(
        'out-of-memory',
        `planning GPU memory: one expert of ${t.name} is ${MiB(expertBytes)}, over the storage binding limit of ` +
          `${MiB(limits.maxStorageBufferBindingSize)} (stacks are split per expert); this model cannot run on this device's WebGPU`,
        { details: { tensor: t.name, expertBytes, maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize } },
      );
    }
    weightBytes += t.shape.length === 1 ? rowBytes : rowBytes * nRows;
  }
  const layerCols = input.kvLayers.map((l) => l.nKvHeads * l.headDim);
  const widest = Math.max(1, ...layerCols);
  const positionBytes = nSlots * widest * input.kvBytesPerElement; // one position of the widest layer, K or V
  const allPositionBytes = 2 * nSlots * layerCols.reduce((a, b) => a + b, 0) * input.kvBytesPerElement; // K and V, all layers
  const kvLayerBytes = positionBytes * input.contextLength;
  const kvBytes = allPositionBytes * input.contextLength;
  const activationBytes = input.activationBytes ?? 0;
  const totalBytes = weightBytes + kvBytes + activationBytes;
  const perBufferLimit = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  let maxContextLength = Math.floor(perBufferLimit / positionBytes);
  if (limits.budgetBytes !== undefined) {
    const left = limits.budgetBytes - weightBytes - activationBytes;
    maxContextLength = Math.min(maxContextLength, Math.max(0, Math.floor(left / Math.max(1, allPositionBytes))));
  }
  const details = {
    weightBytes,
    kvBytes,
    kvLayerBytes,
    activationBytes,
    totalBytes,
    contextLength: input.contextLength,
    maxContextLength,
    maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
    budgetBytes: limits.budgetBytes,
  };
  if (kvLayerBytes > perBufferLimit) {
    throw new LlmError(
      'out-of-memory',
      `planning GPU memory: one layer's KV cache at context ${input.contextLength} needs ${MiB(kvLayerBytes)}, over the ` +
        `device's storage binding limit of ${MiB(perBufferLimit)}; use a context length of at most ${maxContextLength}`,
      { details },
    );
  }
  if (limits.budgetBytes !== undefined && totalBytes > limits.budgetBytes) {
    throw new LlmError(
      'out-of-memory',
      `planning GPU memory: weights ${MiB(weightBytes)} + KV cache ${MiB(kvBytes)} + activations ${MiB(activationBytes)} = ` +
        `${MiB(totalBytes)}, over the budget of ${MiB(limits.budgetBytes)}; ` +
        (maxContextLength > 0
          ? `use a context length of at most ${maxContextLength}`
          : 'the weights alone do not fit: use a smaller or more quantized model'),
      { details },
    );
  }
  return { weightBytes, kvBytes, kvLayerBytes, activationBytes, totalBytes, maxContextLength };
}
