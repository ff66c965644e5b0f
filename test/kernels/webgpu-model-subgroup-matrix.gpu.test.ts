/**
 * Full-model conformance against llama.cpp with the prefill gemm on subgroup matrices (gemm_sm.wgsl, issue 23), run
 * here on the plain-WGSL stand-ins of the matrix builtins (no adapter here offers the feature): the hardware kernel
 * set, f16 path, with f16-component configs (f16 staging of Q4_0 / Q8_0 weights and activations, f32 accumulation:
 * 16×16×16 is the NVIDIA-like case) and an f32 8×8×8 config (the Apple-like case) on the stories260K quantizations. Greedy tokens must equal the reference; tolerances as webgpu-model.gpu.test.ts's f16
 * path.
 */

import { afterAll, vi } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import type { SubgroupMatrixConfig } from '../../src/backend/webgpu/subgroup-matrix.js';
import { formatReport, runConformanceSuite } from '../helpers/conformance-suite.js';
import { destroyTestGpu, getTestDevice } from '../helpers/gpu.js';

afterAll(() => destroyTestGpu());
// A cold shader cache makes lavapipe compile the emulated 16×16×16 kernel for minutes.
vi.setConfig({ testTimeout: 600_000 });

function cfg(componentType: 'f16' | 'f32', size: number): SubgroupMatrixConfig {
  return { componentType, resultComponentType: 'f32', M: size, N: size, K: size };
}

const CONFIGS: [string, SubgroupMatrixConfig, readonly string[]][] = [
  // One 16×16×16 pipeline only: lavapipe takes minutes to compile it with a cold shader cache.
  ['f16→f32 16×16×16', cfg('f16', 16), ['derived/stories260K-q4_0.gguf']],
  ['f16→f32 8×8×8', cfg('f16', 8), ['derived/stories260K-q8_0.gguf']],
  ['f32 8×8×8', cfg('f32', 8), ['stories260K.gguf']],
];

for (const [label, config, fixtures] of CONFIGS) {
  let device: GPUDevice | null = null;
  const name = `webgpu f16+subgroups hardware kernels, emulated subgroup matrices ${label}`;
  runConformanceSuite(
    name,
    async () => {
      device ??= await getTestDevice(['shader-f16', 'subgroups']);
      return createWebGpuOps({ device, kernels: 'hardware', subgroupMatrix: { emulate: [config] } });
    },
    {
      filter: (f) => fixtures.includes(f.id),
      tolerances: (base) => ({ ...base, dequantF32: Math.max(base.dequantF32, 2e-2) + 2e-2, kvF32: base.kvF32 + 2e-2 }),
      onReport: (fixture, report) => console.log(`[${name}] ${formatReport(fixture.id, report)}`),
    },
  );
}
