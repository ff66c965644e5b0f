/**
 * WebGPU device acquisition: a high-performance adapter, the limits a model needs raised to the adapter's maxima,
 * and the optional features (`shader-f16`, `subgroups`, `timestamp-query`) requested when offered. Uses
 * `navigator.gpu` unless a GPU object is passed (Node: npm `webgpu`), so nothing here needs Node.
 */

import { LlmError } from '../../errors.js';
import {
  SUBGROUP_MATRIX_FEATURE,
  type SubgroupMatrixOption,
  type SubgroupMatrixSupport,
  subgroupMatrixSupport,
} from './subgroup-matrix.js';

/**
 * Which kernel set to run: the one made for GPUs ('hardware'), the one made for CPU implementations of WebGPU
 * ('software': barrier-free, fused gemv_bcast), or as the adapter says ('auto'). Forcing 'hardware' on lavapipe is
 * how the GPU kernels are tested and profiled without a GPU. 'hardware-nosubgroups' is the hardware set as a GPU
 * without the `subgroups` feature runs it (Firefox, Safari: the GEMV `gemv` with workgroup-memory reductions), forced
 * whatever the adapter offers.
 */
export type KernelSet = 'hardware' | 'software' | 'auto' | 'hardware-nosubgroups';

/** The kernel sets a caller may name. */
export const KERNEL_SETS: readonly KernelSet[] = ['auto', 'hardware', 'software', 'hardware-nosubgroups'];

/** Options for acquiring a device; all optional. */
export interface GpuDeviceOptions {
  /** The WebGPU entry point (default `navigator.gpu`). */
  readonly gpu?: GPU;
  /** Use this adapter instead of requesting one. */
  readonly adapter?: GPUAdapter;
  /** Use this device as is (the caller owns it; it is not destroyed by the backend). */
  readonly device?: GPUDevice;
  /** Use f16 KV cache and tiles when `shader-f16` is available (default true). */
  readonly preferF16?: boolean;
  /** Use subgroup reductions when `subgroups` is available (default true). */
  readonly useSubgroups?: boolean;
  /**
   * Cap on the bytes of one weight binding, below the device's maxStorageBufferBindingSize (tests use it to
   * exercise weights split across bindings without gigabyte tensors).
   */
  readonly maxBindingBytes?: number;
  /** Treat the adapter as a CPU implementation (true) or a GPU (false); default: detected from its info. */
  readonly isSoftware?: boolean;
  /**
   * Kernel set (default 'auto'); 'hardware' / 'software' override `isSoftware`; 'hardware-nosubgroups' also turns
   * subgroups off (as `useSubgroups: false`).
   */
  readonly kernels?: KernelSet;
  /**
   * gemv_bcast loads x per lane, the path of subgroups narrower than 8 (SwiftShader's 4), also where subgroups are
   * wider (tests take that path on lavapipe's 8 with it). Default false.
   */
  readonly bcastDirectLoads?: boolean;
  /**
   * Q8 activations in the hardware GEMV (gemv_sg) for Q4_0 / Q8_0 — x quantised per 32-element block as llama.cpp's
   * Q8_0, dotted with dot4I8Packed. Default: where the WGSL language feature `packed_4x8_integer_dot_product` is
   * offered (`gpu.wgslLanguageFeatures`, of `gpu` or `navigator.gpu`); true forces it (tests), false turns it off.
   */
  readonly int8Dot?: boolean;
  /** Prefill gemm on subgroup matrices (see SubgroupMatrixOption; default 'auto'). */
  readonly subgroupMatrix?: SubgroupMatrixOption;
}

/** The WGSL language feature the Q8-activation GEMV needs (dot4I8Packed, pack4xI8). */
const INT8_DOT_FEATURE = 'packed_4x8_integer_dot_product';

/** `int8Dot` as the options decide it, else whether the WebGPU entry point offers packed 4×8-bit dot products. */
function int8DotChoice(options: GpuDeviceOptions): boolean {
  if (options.int8Dot !== undefined) return options.int8Dot;
  const gpu = options.gpu ?? (typeof navigator !== 'undefined' ? (navigator as Navigator).gpu : undefined);
  const features = (gpu as { wgslLanguageFeatures?: ReadonlySet<string> } | undefined)?.wgslLanguageFeatures;
  return features?.has(INT8_DOT_FEATURE) === true;
}

/** `isSoftware` as the options decide it, or undefined to detect it from the adapter. */
function softwareChoice(options: GpuDeviceOptions): boolean | undefined {
  if (options.kernels === 'hardware' || options.kernels === 'hardware-nosubgroups') return false;
  if (options.kernels === 'software') return true;
  return options.isSoftware;
}

/** A device with the capability choices made for it. */
export interface GpuContext {
  readonly device: GPUDevice;
  /** f16 storage for KV cache and gemm tiles (requires and uses `shader-f16`). */
  readonly isF16: boolean;
  /** Subgroup reductions (requires and uses `subgroups`). */
  readonly isSubgroups: boolean;
  /**
   * The device has `timestamp-query` (requested whenever the adapter offers it, never required). Only the opt-in GPU
   * timer of the benchmarks (test/bench/gpu-timer.ts) uses it; the production decode step records no timestamps.
   */
  readonly hasTimestampQuery: boolean;
  /** Adapter description for logs, e.g. 'llvmpipe (LLVM 19.1.7, 256 bits)'. */
  readonly adapterDescription: string;
  /** True when the backend created the device and must destroy it. */
  readonly ownsDevice: boolean;
  /** Bytes of one weight binding at most (≤ the device limits). */
  readonly maxBindingBytes: number;
  /**
   * A CPU implementation of WebGPU (lavapipe/llvmpipe, SwiftShader, a fallback adapter): each invocation is a SIMD
   * lane and every workgroup barrier is costly, so kernels pick barrier-free variants there.
   */
  readonly isSoftware: boolean;
  /** See GpuDeviceOptions.bcastDirectLoads. */
  readonly bcastDirectLoads: boolean;
  /** Q8 activations with dot4I8Packed in gemv_sg (see GpuDeviceOptions.int8Dot). */
  readonly isInt8Dot: boolean;
  /** The subgroup-matrix configs gemm_sm may use (null or absent: the plain gemm). */
  readonly subgroupMatrix?: SubgroupMatrixSupport | null;
}

/** Limits raised to the adapter's maxima (bigger is better for each). */
const MAX_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
] as const;

/** Limits lowered to the adapter's minima (smaller is better). */
const MIN_LIMITS = ['minUniformBufferOffsetAlignment', 'minStorageBufferOffsetAlignment'] as const;

const OPTIONAL_FEATURES: readonly GPUFeatureName[] = [
  'shader-f16',
  'subgroups',
  'timestamp-query',
  SUBGROUP_MATRIX_FEATURE,
] as GPUFeatureName[];

/** True for adapters that run on the CPU (see GpuContext.isSoftware). */
function isSoftwareAdapter(info: GPUAdapterInfo | undefined): boolean {
  if (!info) return false;
  const text = `${info.vendor} ${info.architecture} ${info.device} ${info.description}`.toLowerCase();
  return (
    /llvmpipe|lavapipe|swiftshader/.test(text) || (info as { isFallbackAdapter?: boolean }).isFallbackAdapter === true
  );
}

function describeAdapter(adapter: GPUAdapter | undefined): string {
  const info = adapter?.info;
  if (!info) return 'unknown adapter';
  return (
    info.description || [info.vendor, info.architecture, info.device].filter((s) => s).join(' ') || 'unknown adapter'
  );
}

/**
 * Acquires a device per `options`.
 * @throws LlmError('webgpu-unavailable') when there is no WebGPU or no adapter.
 */
export async function requestGpuContext(options: GpuDeviceOptions = {}): Promise<GpuContext> {
  const preferF16 = options.preferF16 ?? true;
  const useSubgroups = (options.useSubgroups ?? true) && options.kernels !== 'hardware-nosubgroups';
  if (options.device) {
    const d = options.device;
    const info = options.adapter?.info ?? (d as { adapterInfo?: GPUAdapterInfo }).adapterInfo;
    const isSubgroups = useSubgroups && d.features.has('subgroups');
    return {
      device: d,
      isF16: preferF16 && d.features.has('shader-f16'),
      isSubgroups,
      hasTimestampQuery: d.features.has('timestamp-query'),
      adapterDescription:
        describeAdapter(options.adapter) === 'unknown adapter'
          ? 'caller-provided device'
          : describeAdapter(options.adapter),
      ownsDevice: false,
      maxBindingBytes: bindingCap(d, options.maxBindingBytes),
      isSoftware: softwareChoice(options) ?? isSoftwareAdapter(info),
      bcastDirectLoads: options.bcastDirectLoads === true,
      isInt8Dot: int8DotChoice(options),
      subgroupMatrix: subgroupMatrixSupport(options.subgroupMatrix, d, info, isSubgroups),
    };
  }
  let adapter = options.adapter ?? null;
  if (!adapter) {
    const gpu = options.gpu ?? (typeof navigator !== 'undefined' ? (navigator as Navigator).gpu : undefined);
    if (!gpu) {
      throw new LlmError(
        'webgpu-unavailable',
        'creating the WebGPU backend: this environment has no WebGPU (navigator.gpu is undefined). ' +
          'Use a browser with WebGPU enabled, pass { gpu } in Node (npm "webgpu"), or use the wasm backend.',
      );
    }
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (!adapter) {
      throw new LlmError(
        'webgpu-unavailable',
        'creating the WebGPU backend: requestAdapter() returned no adapter. Check that WebGPU is enabled ' +
          '(chrome://gpu) or use the wasm backend.',
      );
    }
  }
  const requiredLimits: Record<string, number> = {};
  const adapterLimits = adapter.limits as unknown as Record<string, number>;
  for (const name of [...MAX_LIMITS, ...MIN_LIMITS]) {
    const v = adapterLimits[name];
    if (typeof v === 'number') requiredLimits[name] = v;
  }
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ label: 'webgguf', requiredFeatures, requiredLimits });
  } catch (cause) {
    throw new LlmError('webgpu-unavailable', `creating the WebGPU backend: requestDevice failed (${String(cause)})`, {
      cause,
    });
  }
  const isSubgroups = useSubgroups && device.features.has('subgroups');
  return {
    device,
    isF16: preferF16 && device.features.has('shader-f16'),
    isSubgroups,
    hasTimestampQuery: device.features.has('timestamp-query'),
    adapterDescription: describeAdapter(adapter),
    ownsDevice: true,
    maxBindingBytes: bindingCap(device, options.maxBindingBytes),
    isSoftware: softwareChoice(options) ?? isSoftwareAdapter(adapter.info),
    bcastDirectLoads: options.bcastDirectLoads === true,
    isInt8Dot: int8DotChoice(options),
    subgroupMatrix: subgroupMatrixSupport(options.subgroupMatrix, device, adapter.info, isSubgroups),
  };
}

function bindingCap(device: GPUDevice, cap: number | undefined): number {
  const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  return cap !== undefined && cap > 0 ? Math.min(cap, limit) : limit;
}

/**
 * Watches a device: `onLost` runs once when it is lost (also when destroyed: a caller-provided device may be
 * destroyed under the backend; the backend ignores its own destroy), and uncaptured validation
 * errors are logged — their message carries the pipeline label (`gemv.q4_k.f16.wg64`) of the failing variant.
 */
export function watchDevice(device: GPUDevice, onLost: (reason: string) => void): void {
  void device.lost.then((info) => {
    onLost(info.message || String(info.reason));
  });
  const handler = (ev: Event): void => {
    const err = (ev as GPUUncapturedErrorEvent).error;
    console.error(`[webgguf webgpu] uncaptured ${err.constructor?.name ?? 'error'}: ${err.message}`);
  };
  if (typeof device.addEventListener === 'function') device.addEventListener('uncapturederror', handler);
  else (device as { onuncapturederror: ((ev: Event) => void) | null }).onuncapturederror = handler;
}
