/**
 * The WebGPU entry point in Node for benchmarks: npm `webgpu` (Dawn), on Mesa lavapipe when its Vulkan ICD is
 * installed and no other ICD is chosen (set VK_ICD_FILENAMES yourself to bench a real GPU).
 */

import { existsSync } from 'node:fs';

const LAVAPIPE_ICD = '/usr/share/vulkan/icd.d/lvp_icd.json';

/** Creates (once) and returns Dawn's `GPU` object; installs the WebGPU globals it needs. */
export async function nodeGpu(): Promise<GPU> {
  if (cached) return cached;
  if (!process.env['VK_ICD_FILENAMES'] && !process.env['WEBGGUF_REAL_GPU'] && existsSync(LAVAPIPE_ICD)) {
    process.env['VK_ICD_FILENAMES'] = LAVAPIPE_ICD;
  }
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  cached = create([]) as GPU;
  return cached;
}

let cached: GPU | null = null;
