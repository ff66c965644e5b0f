/**
 * WebGPU in Node for the *.gpu.test.ts files: Dawn (npm `webgpu`) on Mesa lavapipe when its ICD is installed.
 * `getTestGpu()` creates the GPU entry point once per test file and logs the adapter; `GPU_VARIANTS` lists the
 * capability paths every kernel is tested on; `destroyTestGpu()` (afterAll) releases what the file created.
 */

import { existsSync } from 'node:fs';
import { create, globals } from 'webgpu';

const LAVAPIPE_ICD = '/usr/share/vulkan/icd.d/lvp_icd.json';

/** One capability path of the backend. */
export interface GpuVariant {
  readonly name: string;
  readonly preferF16: boolean;
  readonly useSubgroups: boolean;
}

/** The paths tested: f16 storage with subgroup reductions, and the f32 / workgroup-memory path (SwiftShader-like). */
export const GPU_VARIANTS: readonly GpuVariant[] = [
  { name: 'f16+subgroups', preferF16: true, useSubgroups: true },
  { name: 'f32+shared', preferF16: false, useSubgroups: false },
];

let gpu: GPU | null = null;
const devices: GPUDevice[] = [];

/** The Node WebGPU entry point (lavapipe when available), created once per file. */
export async function getTestGpu(): Promise<GPU> {
  if (gpu) return gpu;
  if (existsSync(LAVAPIPE_ICD) && !process.env.VK_ICD_FILENAMES) process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
  Object.assign(globalThis, globals);
  gpu = create([]) as GPU;
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter in Node: install Mesa lavapipe 25 (see docs/test-environment.md §1)');
  console.log(`[gpu] adapter: ${adapter.info.description || adapter.info.vendor}`);
  return gpu;
}

/** A raw device (for tests that drive pipelines directly); destroyed by `destroyTestGpu`. */
export async function getTestDevice(features: GPUFeatureName[] = []): Promise<GPUDevice> {
  const adapter = await (await getTestGpu()).requestAdapter();
  const device = await adapter!.requestDevice({ requiredFeatures: features.filter((f) => adapter!.features.has(f)) });
  devices.push(device);
  return device;
}

/** Destroys the devices this file created, so the process can exit. */
export function destroyTestGpu(): void {
  for (const d of devices) d.destroy();
  devices.length = 0;
}
