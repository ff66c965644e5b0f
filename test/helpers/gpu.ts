/**
 * WebGPU in Node for the *.gpu.test.ts files: Dawn (npm `webgpu`) on Mesa lavapipe when its ICD is installed.
 * `getTestGpu()` creates the GPU entry point once per test file and logs the adapter; `GPU_VARIANTS` lists the
 * capability paths every kernel is tested on; `destroyTestGpu()` (afterAll) releases what the file created.
 */

import { existsSync } from 'node:fs';
import { create, globals } from 'webgpu';
import type { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import { quantWeightBytes } from './quant-weight.js';

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
  if (!adapter)
    throw new Error('no WebGPU adapter in Node: install Mesa lavapipe 25 (see ../shared/docs/test-environment.md §1)');
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

/** Deterministic pseudo-random numbers (xorshift32), roughly normal (sum of four uniforms), scaled by `scale`. */
export function randoms(n: number, seed: number, scale = 1.7): Float32Array {
  let s = seed >>> 0 || 1;
  const u = (): number => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  const out = new Float32Array(n); // (n)
  for (let i = 0; i < n; i++) out[i] = (u() + u() + u() + u() - 2) * scale;
  return out;
}

/** Normalised mean squared error of `actual` against `expected` (ggml test-backend-ops). */
export function nmseOf(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < expected.length; i++) {
    num += (actual[i]! - expected[i]!) ** 2;
    den += expected[i]! ** 2;
  }
  return num / Math.max(den, 1e-30);
}

/** max |a − e| / max(1, max |e|): an absolute error scaled to the data. */
export function relMaxAbs(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let d = 0;
  let m = 1;
  for (let i = 0; i < expected.length; i++) {
    d = Math.max(d, Math.abs(actual[i]! - expected[i]!));
    m = Math.max(m, Math.abs(expected[i]!));
  }
  return d / m;
}

/**
 * Collects the WebGPU errors the backend logs (`[webgguf webgpu] …`, from `uncapturederror`) from now on, so a
 * test can assert there were none; validation errors otherwise only show up as wrong numbers.
 */
export function collectGpuErrors(): string[] {
  const errors: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]): void => {
    const message = args.map(String).join(' ');
    if (message.startsWith('[webgguf webgpu]')) errors.push(message);
    original(...args);
  };
  return errors;
}

/** A weight of `type` with `nRows` rows of `k` from seeded randoms: its GGUF bytes and the dequantized values. */
export function makeWeight(
  type: GgmlType,
  k: number,
  nRows: number,
  seed: number,
): { bytes: Uint8Array; values: Float32Array } {
  const qt = getQuantType(type);
  const src = randoms(k * nRows, seed); // (nRows, k)
  const bytes = quantWeightBytes(qt, src, seed);
  const values = new Float32Array(k * nRows); // (nRows, k)
  qt.dequantizeRow(bytes, values, values.length);
  return { bytes, values };
}
