/**
 * Streamed weight loading on WebGPU (`beginGpuWeight`, backend/webgpu/weight-upload.ts): pieces of a few rows read
 * into staging arrays and written with `writeBuffer` at their rows' place (across binding parts: `maxBindingBytes`
 * forces several) give the same logits as uploading each tensor whole, on the software and the hardware kernel sets
 * (the latter gathers grouped Q|K|V and gate|up members whole).
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { destroyTestGpu, getTestDevice } from '../helpers/gpu.js';
import { sharedPath } from '../helpers/shared-path.js';

afterAll(() => destroyTestGpu());

const TOKENS = Int32Array.of(1, 82, 113, 346, 701);

/** `ops` without `beginWeight`: each tensor read whole and given to `uploadWeight`. */
function wholeTensorOps(ops: Ops): Ops {
  return new Proxy(ops, {
    get(target, key) {
      if (key === 'beginWeight') return undefined;
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

async function logitsOf(rel: string, kernels: 'software' | 'hardware', streamed: boolean): Promise<Float32Array> {
  const device = await getTestDevice(['shader-f16', 'subgroups']);
  const source = await NodeFileSource.open(sharedPath('models', rel));
  try {
    const gguf = await parseGguf(source);
    const ops = await createWebGpuOps({ device, preferF16: false, kernels, maxBindingBytes: 64 * 1024 });
    const model = await loadTransformer(gguf, source, streamed ? ops : wholeTensorOps(ops), {
      contextLength: 16,
      pieceBytes: 3000,
    });
    const logits = (await model.eval(
      TOKENS.map((t) => t % model.config.vocabSize),
      0,
      0,
      { logits: 'all' },
    ))!;
    model.destroy();
    return logits;
  } finally {
    await source.close();
  }
}

describe('streamed weight load (WebGPU)', () => {
  for (const [rel, kernels] of [
    ['arch/qwen2-q8_0.gguf', 'software'],
    ['arch/llama3-q4_k_m.gguf', 'software'],
    ['arch/phi3-q8_0.gguf', 'hardware'],
  ] as const) {
    it(`${rel} (${kernels} kernels): pieces give the same logits as whole tensors`, async () => {
      const streamed = await logitsOf(rel, kernels, true);
      const whole = await logitsOf(rel, kernels, false);
      expect(streamed.length).toBe(whole.length);
      expect(Buffer.from(streamed.buffer).equals(Buffer.from(whole.buffer))).toBe(true);
    }, 120_000);
  }
});
