/**
 * Entry point of the WebGPU backend: `createWebGpuOps()` acquires a device (navigator.gpu unless a GPU, adapter or
 * device is passed) and returns the `Ops` implementation (the engine's pre-download memory check is
 * api/memory-preflight.ts, over memory-plan.ts).
 */

import { loadFeatureShaders } from './compose.js';
import { type GpuDeviceOptions, requestGpuContext } from './device.js';
import { WebGpuOps } from './webgpu-ops.js';

export type { StepProfile } from './profile.js';
export { WebGpuOps } from './webgpu-ops.js';

/** Options of `createWebGpuOps`. */
export type WebGpuOpsOptions = GpuDeviceOptions;

/**
 * Creates the WebGPU backend.
 * - `gpu`: the WebGPU entry point (default `navigator.gpu`; in Node pass `create([])` of npm `webgpu`).
 * - `adapter` / `device`: use these instead of requesting them (a passed device is not destroyed by `destroy()`).
 * - `preferF16` (default true): f16 KV cache and gemm tiles when `shader-f16` exists; false forces the f32 path.
 * - `useSubgroups` (default true): subgroup reductions when `subgroups` exists; false forces workgroup memory.
 * - `maxBindingBytes`: split weights into bindings of at most this many bytes (default: the device limit).
 * - `isSoftware`: pick kernels for a CPU implementation of WebGPU or for a GPU (default: from the adapter info).
 * - `kernels`: 'hardware' | 'software' force a kernel set whatever the adapter ('auto', the default, detects it).
 * - `int8Dot`: Q8 activations (dot4I8Packed) in the hardware GEMV for Q4_0 / Q8_0; default where the WGSL language
 *   feature `packed_4x8_integer_dot_product` is offered, true / false force it.
 * - `subgroupMatrix`: 'auto' (default: the prefill gemm on `chromium-experimental-subgroup-matrix` where the device
 *   has it), 'off', or `{ emulate: configs }` (tests: the same kernel on plain-WGSL stand-ins of the builtins).
 * @throws LlmError('webgpu-unavailable') without WebGPU or an adapter.
 */
export async function createWebGpuOps(options: WebGpuOpsOptions = {}): Promise<WebGpuOps> {
  const ctx = await requestGpuContext(options);
  // The subgroup-matrix gemm's WGSL and the software kernel set's gemv_bcast are feature shaders (feature-shaders.ts):
  // fetched only for a device that runs them.
  if (ctx.subgroupMatrix || ctx.isSoftware) await loadFeatureShaders();
  return new WebGpuOps(ctx);
}
