/**
 * Models in the IQ1–IQ3 / MXFP4 types on the WebGPU backend vs llama.cpp (both capability paths, the kernel set the
 * adapter gets), made at test time by ggml from a committed seed (test/helpers/iq-models.ts). To fit lavapipe's CPU
 * budget a subset covering each decoder family runs by default (MXFP4, IQ2_XXS, IQ3_S, IQ1_M); WEBGGUF_GPU_FULL=1
 * runs all eight. Tolerances as test/kernels/webgpu-model.gpu.test.ts. Needs the dev-only oracle (scripts/oracle).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { formatReport } from '../helpers/conformance-suite.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';
import { checkIqModel, HAVE_ORACLE, IQ_MODELS, makeIqModel, writeSeedModel } from '../helpers/iq-models.js';

const SUBSET = ['MXFP4', 'IQ2_XXS', 'IQ3_S', 'IQ1_M'];
const MODELS = IQ_MODELS.filter((m) => process.env.WEBGGUF_GPU_FULL === '1' || SUBSET.includes(m.type));

describe.skipIf(!HAVE_ORACLE)('IQ / MXFP4 models vs llama.cpp on WebGPU (needs scripts/oracle)', () => {
  let dir = '';
  let f32 = '';
  let device: GPUDevice | null = null;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'webgguf-iq-gpu-'));
    f32 = await writeSeedModel(dir);
  }, 120_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    destroyTestGpu();
  });

  for (const m of MODELS) {
    it(`${m.type}: logits, argmax and greedy match llama.cpp's on both paths`, async () => {
      const { gguf, ref } = makeIqModel(dir, f32, m);
      for (const variant of GPU_VARIANTS) {
        const { report } = await checkIqModel(
          gguf,
          ref,
          m,
          async () => {
            device ??= await getTestDevice(['shader-f16', 'subgroups']);
            return createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
          },
          (base) => {
            const extra = variant.preferF16 ? 2e-2 : 0;
            return { ...base, dequantF32: Math.max(base.dequantF32, 2e-2) + extra, kvF32: base.kvF32 + extra };
          },
        );
        const failed = report.checks.filter((c) => !c.passed).map((c) => `${c.name}: ${c.detail}`);
        console.log(`[webgpu ${variant.name}] ${formatReport(m.type, report)}`);
        expect(failed, `${variant.name} ${formatReport(m.type, report)}`).toEqual([]);
      }
    }, 600_000);
  }
});
