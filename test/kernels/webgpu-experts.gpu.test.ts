/**
 * The WebGPU backend's mixture-of-experts ops (moe_route, gemv_id, moe_combine) against the reference backend,
 * through `expectExpertOpsMatch`, on both capability paths and both kernel sets (their weight layouts differ):
 * Q8_0 with an odd number of rows per expert, Q4_K, F16, Q2_K (and Q4_0, Q5_K, Q6_K for gemv_id_dot's block
 * products, also on its per-lane x path); decode and multi-token steps; sigmoid and softmax
 * routing. An unselected expert holds NaN, so reading it fails the check. Also: a stack bigger than the weight
 * binding limit is split per expert and still routed right, and a MoE model's decode step is one submission whose
 * only readback is the argmax (no per-layer readback of the routing).
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from '../helpers/shared-path.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';
import { GgmlType } from '../../src/gguf/types.js';
import { EXPERT_CASES, type ExpertCase, expectExpertOpsMatch, SOFTMAX_NORM } from '../helpers/moe-ops-check.js';

afterAll(() => destroyTestGpu());

/** The other types with a block product in gemv_id_dot (software kernels): odd rows per expert, several blocks. */
const BLOCK_CASES: readonly ExpertCase[] = [
  { type: GgmlType.Q4_0, nExperts: 5, rows: 17, k: 96, nUsed: 3, n: 2, route: SOFTMAX_NORM },
  { type: GgmlType.Q5_K, nExperts: 5, rows: 17, k: 512, nUsed: 3, n: 1, route: SOFTMAX_NORM },
  { type: GgmlType.Q6_K, nExperts: 6, rows: 17, k: 512, nUsed: 2, n: 3, route: SOFTMAX_NORM },
];
const CASES = [...EXPERT_CASES, ...BLOCK_CASES];

describe('webgpu mixture-of-experts ops vs the reference', () => {
  for (const kernels of ['auto', 'hardware'] as const) {
    for (const variant of GPU_VARIANTS) {
      it(`${variant.name}, ${kernels} kernels`, async () => {
        const device = await getTestDevice(['shader-f16', 'subgroups']);
        const gpu = await createWebGpuOps({
          device,
          preferF16: variant.preferF16,
          useSubgroups: variant.useSubgroups,
          kernels,
        });
        for (const c of CASES) await expectExpertOpsMatch(gpu, createCpuOps(), c, 2e-3);
        gpu.destroy();
      }, 120_000);
    }
  }

  it('software kernels with per-lane x loads (gemv_id_dot on subgroups narrower than 8)', async () => {
    const device = await getTestDevice(['shader-f16', 'subgroups']);
    const gpu = await createWebGpuOps({
      device,
      preferF16: true,
      useSubgroups: true,
      kernels: 'software',
      bcastDirectLoads: true,
    });
    for (const c of [EXPERT_CASES[2]!, ...BLOCK_CASES]) await expectExpertOpsMatch(gpu, createCpuOps(), c, 2e-3);
    gpu.destroy();
  }, 60_000);

  it('splits a stack over the binding limit per expert', async () => {
    const device = await getTestDevice([]);
    // 7 experts × 33 rows × 64 Q8_0 values: one expert (33 rows × 144 bytes) per 5 KB binding → 7 parts.
    const gpu = await createWebGpuOps({ device, preferF16: false, useSubgroups: false, maxBindingBytes: 5000 });
    await expectExpertOpsMatch(gpu, createCpuOps(), CASES[1]!, 2e-3);
    gpu.destroy();
  }, 60_000);

  it('splits expert stacks per expert when the weights stream in at load too', async () => {
    // loadTransformer streams tensors (beginWeight); a stack over the binding limit must split at expert boundaries
    // there as in uploadWeight, else gemv_id addresses experts across parts wrongly.
    const device = await getTestDevice([]);
    const path = `${RECORDED_FIXTURE_DIR}/qwen3moe-q8_0-s2.gguf`;
    const logitsWith = async (maxBindingBytes?: number): Promise<Float32Array> => {
      const ops = await createWebGpuOps({
        device,
        preferF16: false,
        useSubgroups: false,
        ...(maxBindingBytes ? { maxBindingBytes } : {}),
      });
      const source = await NodeFileSource.open(path);
      const gguf = await parseGguf(source);
      const model = await loadTransformer(gguf, source, ops, { contextLength: 16 });
      try {
        await model.eval(Int32Array.of(1, 403, 407, 261), 0, 0);
        return await model.readLogits();
      } finally {
        model.destroy();
        await source.close();
      }
    };
    const source = await NodeFileSource.open(path);
    const stack = (await parseGguf(source)).tensors.find((t) => t.name === 'blk.0.ffn_down_exps.weight')!;
    await source.close();
    const expertBytes = stack.byteLength / stack.shape[2]!;
    const whole = await logitsWith();
    const split = await logitsWith(Math.ceil(expertBytes * 1.5)); // one expert per part
    let maxDiff = 0;
    for (let i = 0; i < whole.length; i++) maxDiff = Math.max(maxDiff, Math.abs(whole[i]! - split[i]!));
    expect(maxDiff).toBeLessThan(1e-4);
  }, 120_000);

  it('decodes a MoE model with one submission and only the argmax readback per token (routing stays on the GPU)', async () => {
    const device = await getTestDevice([]);
    const ops = await createWebGpuOps({ device, preferF16: false, useSubgroups: false });
    const source = await NodeFileSource.open(`${RECORDED_FIXTURE_DIR}/qwen3moe-q8_0-s2.gguf`);
    const model = await loadTransformer(await parseGguf(source), source, ops, { contextLength: 64 });
    try {
      await model.eval(Int32Array.of(1, 403, 407, 261), 0, 0);
      let tok = await model.argmax();
      for (let pos = 4; pos < 8; pos++) {
        const { submissions, bytesRead } = ops.stats;
        await model.eval(Int32Array.of(tok), pos, 0);
        tok = await model.argmax();
        expect(ops.stats.submissions - submissions).toBe(1);
        expect(ops.stats.bytesRead - bytesRead).toBeLessThanOrEqual(8); // argmax's result only, whatever the layers
      }
    } finally {
      model.destroy();
      await source.close();
    }
  }, 60_000);
});
