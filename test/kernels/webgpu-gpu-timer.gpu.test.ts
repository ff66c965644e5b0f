/**
 * GPU timing (test/bench/gpu-timer.ts) on Dawn + lavapipe: a device without `timestamp-query` reports the
 * timer unavailable; with it, stories260K decode steps stay one submission each with the timer off and on, greedy
 * tokens are the same either way, and the timestamps land per op kind (matmul attn/ffn/output, attention, norms …,
 * or the kernel family for work recorded outside an op call) with every dispatch timed once. The bench's profiler hook (op-profiler.ts) names the kinds.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { requestGpuContext } from '../../src/backend/webgpu/device.js';
import { createGpuTimer, gpuTimerUnavailableReason, kernelFamily, type GpuTimer } from '../bench/gpu-timer.js';
import { createWebGpuOps, type WebGpuOps } from '../../src/backend/webgpu/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import type { TransformerModel } from '../../src/model/transformer.js';
import { gpuBreakdownPerToken, profileOps } from '../bench/op-profiler.js';
import { destroyTestGpu, getTestDevice, getTestGpu } from '../helpers/gpu.js';
import { greedySteps, type GreedySteps } from '../helpers/greedy-steps.js';
import { sharedPath } from '../helpers/shared-path.js';

/** Op kinds the bench profiler names (op-profiler.ts): Ops methods, matmuls split by weight. */
const OP_KINDS = new Set([
  'embed',
  'rmsNorm',
  'rope',
  'storeKv',
  'attention',
  'glu',
  'add',
  'scale',
  'softcap',
  'copyRows',
  'argmax',
  'topK',
  'read',
  'copyKv',
  'beginStep',
  'endStep',
  'matmul attn',
  'matmul ffn',
  'matmul output',
  'matmul other',
  'rope+storeKv',
]);

const cleanups: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  destroyTestGpu();
});

describe('kernelFamily', () => {
  it('keeps the quant type of matrix kernels and the name of the others', () => {
    expect(kernelFamily('gemv.q4_0.f32.wg64')).toBe('gemv.q4_0');
    expect(kernelFamily('gemm.q8_0.f16')).toBe('gemm.q8_0');
    expect(kernelFamily('rms_norm.main.f32')).toBe('rms_norm');
    expect(kernelFamily('argmax')).toBe('argmax');
    expect(kernelFamily('')).toBe('unlabelled');
  });
});

describe('gpu timer without timestamp-query', () => {
  it('reports unavailable and creates nothing', async () => {
    const device = await getTestDevice([]);
    expect(device.features.has('timestamp-query')).toBe(false);
    expect(gpuTimerUnavailableReason(device)).toMatch(/timestamp-query/);
    expect(createGpuTimer(device)).toBeNull();
  });
});

/** Greedy decode of `n` tokens after `prompt`; returns the tokens (the prompt's pick first) and the submissions per step. */
async function decode(model: TransformerModel, ops: WebGpuOps, prompt: Int32Array, n: number): Promise<GreedySteps> {
  await model.eval(prompt, 0, 0);
  const first = await model.argmax();
  const steps = await greedySteps(model, ops.stats, first, prompt.length, n);
  return { tokens: [first, ...steps.tokens], submissionsPerStep: steps.submissionsPerStep };
}

describe('gpu timer on stories260K', async () => {
  const gpu = await getTestGpu();
  const adapter = (await gpu.requestAdapter())!;
  const hasTimestamps = adapter.features.has('timestamp-query');
  console.log(
    `[gpu-timer] adapter ${adapter.info.description}: timestamp-query ${hasTimestamps ? 'offered' : 'not offered'}`,
  );

  it('device.ts requests timestamp-query when the adapter offers it', async () => {
    const ctx = await requestGpuContext({ adapter: (await gpu.requestAdapter())! });
    cleanups.push(() => ctx.device.destroy());
    expect(ctx.hasTimestampQuery).toBe(hasTimestamps);
    expect(ctx.device.features.has('timestamp-query')).toBe(hasTimestamps);
  });

  it.runIf(hasTimestamps)('keeps one submission per step and times every dispatch per op kind', async () => {
    const own = (await gpu.requestAdapter())!; // an adapter makes one device
    const ctx = await requestGpuContext({ adapter: own, preferF16: false });
    const timer: GpuTimer = createGpuTimer(ctx.device)!;
    expect(timer).not.toBeNull();
    const ops = await createWebGpuOps({ adapter: own, device: timer.device, preferF16: false });
    const { ops: profiledOps, profile } = profileOps(ops, timer);
    const source = await NodeFileSource.open(sharedPath('models', 'stories260K.gguf'));
    const model = await loadTransformer(await parseGguf(source), source, profiledOps, { contextLength: 64 });
    cleanups.push(async () => {
      model.destroy();
      timer.destroy();
      ctx.device.destroy();
      await source.close();
    });
    const prompt = Int32Array.of(1, 403, 407, 261, 378);

    // Timer off: the wrapped device changes nothing.
    const plain = await decode(model, ops, prompt, 4);
    expect(plain.submissionsPerStep).toEqual([1, 1, 1, 1]);
    expect((await timer.collect()).passes).toBe(0);

    // Timer on, with the profiler naming op kinds: same tokens, still one submission per step, every dispatch timed.
    await model.eval(prompt, 0, 0);
    let tok = await model.argmax();
    profile.enabled = true;
    timer.enabled = true;
    const d0 = ops.stats.dispatches;
    const s0 = ops.stats.submissions;
    const t0 = performance.now();
    const timed = [tok];
    for (let i = 0; i < 4; i++) {
      await model.eval(Int32Array.of(tok), prompt.length + i, 0);
      tok = await model.argmax();
      timed.push(tok);
    }
    const wall = performance.now() - t0;
    timer.enabled = false;
    profile.enabled = false;
    expect(ops.stats.submissions - s0).toBe(4);
    const t = await timer.collect();
    expect(timed).toEqual(plain.tokens);
    expect(t.passes).toBe(ops.stats.dispatches - d0);
    expect(t.submissions).toBe(4);
    expect(t.busyMs).toBeGreaterThan(0);
    expect(t.spanMs).toBeGreaterThanOrEqual(t.busyMs * 0.999);
    expect(t.busyMs).toBeLessThan(wall);
    // Kinds are the profiler's op names, or — for dispatches recorded outside any op call (fused or deferred work) —
    // the kernel family of the pipeline label.
    const families = new Set([...t.byKernel.keys()].map(kernelFamily));
    for (const kind of t.byKind.keys()) expect(OP_KINDS.has(kind) || families.has(kind), kind).toBe(true);
    expect(t.dispatchesByKind.get('argmax') ?? 0).toBe(4);
    expect([...t.byKind.keys()].some((k) => /^(matmul|gemv|gemm)/.test(k))).toBe(true);
    expect(t.byKind.size).toBeGreaterThanOrEqual(4);
    const sumKinds = [...t.byKind.values()].reduce((a, b) => a + b, 0);
    const sumKernels = [...t.byKernel.values()].reduce((a, b) => a + b, 0);
    expect(sumKinds).toBeCloseTo(t.busyMs, 6);
    expect(sumKernels).toBeCloseTo(t.busyMs, 6);
    const perToken = gpuBreakdownPerToken(t.byKind, t.spanMs, 4, wall);
    expect(Object.keys(perToken)).toContain('host/wait (GPU idle)');
    console.log(
      `[gpu-timer] stories260K, ${t.passes / 4} timed passes per step, GPU ms per token: ${JSON.stringify(perToken)}`,
    );
    console.log(
      `[gpu-timer] by kernel, ms per token: ${[...t.byKernel].map(([k, v]) => `${k} ${(v / 4).toFixed(3)}`).join(', ')}`,
    );

    // Off again: back to the backend's own single pass; totals reset.
    timer.reset();
    const after = await decode(model, ops, prompt, 2);
    expect(after.submissionsPerStep).toEqual([1, 1]);
    expect((await timer.collect()).passes).toBe(0);
  });
});
