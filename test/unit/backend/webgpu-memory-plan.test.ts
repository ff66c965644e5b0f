/**
 * The WebGPU memory plan (no GPU needed): sizes from metadata alone, split-free checks against the binding limit,
 * and LlmError('out-of-memory') with the numbers and a context length that fits.
 */

import { describe, expect, it } from 'vitest';
import { planMemory } from '../../../src/backend/webgpu/memory-plan.js';
import { GgmlType } from '../../../src/gguf/types.js';
import { isLlmError } from '../../../src/errors.js';
import { uniformKvLayers } from '../../helpers/kv-layers.js';

const MiB = 1 << 20;
const model = {
  tensors: [
    { name: 'token_embd.weight', type: GgmlType.Q8_0, shape: [896, 151936] },
    { name: 'blk.0.attn_q.weight', type: GgmlType.Q4_0, shape: [896, 896] },
    { name: 'blk.0.attn_norm.weight', type: GgmlType.F32, shape: [896] },
  ],
  kvLayers: uniformKvLayers(24, 2, 64),
  contextLength: 4096,
  kvBytesPerElement: 2 as const,
  activationBytes: 8 * MiB,
};

describe('planMemory', () => {
  it('sizes weights as repacked (Q8_0 36 B and Q4_0 20 B per block), KV and activations', () => {
    const plan = planMemory(model, { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 4096 * MiB });
    const weights = 151936 * 28 * 36 + 896 * 28 * 20 + 896 * 4;
    expect(plan.weightBytes).toBe(weights);
    expect(plan.kvLayerBytes).toBe(4096 * 2 * 64 * 2);
    expect(plan.kvBytes).toBe(2 * 24 * plan.kvLayerBytes);
    expect(plan.totalBytes).toBe(weights + plan.kvBytes + 8 * MiB);
    expect(plan.maxContextLength).toBeGreaterThanOrEqual(4096);
  });

  it('counts the layouts of the kernel set: Q6_K re-coded for the software set (288 B per block), plain 53-word blocks on GPUs (212 B)', () => {
    const q6 = { ...model, tensors: [{ name: 'output.weight', type: GgmlType.Q6_K, shape: [1024, 1000] }] };
    const limits = { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 4096 * MiB };
    expect(planMemory(q6, limits).weightBytes).toBe(1000 * 4 * 288);
    expect(planMemory({ ...q6, kernels: 'software' }, limits).weightBytes).toBe(1000 * 4 * 288);
    expect(planMemory({ ...q6, kernels: 'hardware' }, limits).weightBytes).toBe(1000 * 4 * 212);
    // the hardware set's row-split Q8_0: bodies and scales, exactly the GGUF's 34 B per block
    const q8 = { ...model, tensors: [model.tensors[0]!], kernels: 'hardware' as const };
    expect(planMemory(q8, limits).weightBytes).toBe(151936 * 28 * 34);
  });

  it('fails over budget with the numbers and a shorter context that fits', () => {
    const budget = 180 * MiB;
    try {
      planMemory(model, { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 4096 * MiB, budgetBytes: budget });
      expect.unreachable();
    } catch (e) {
      expect(isLlmError(e, 'out-of-memory')).toBe(true);
      const details = (e as { details: { maxContextLength: number } }).details;
      expect((e as Error).message).toMatch(/context length of at most \d+/);
      const ok = planMemory(
        { ...model, contextLength: details.maxContextLength },
        { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 4096 * MiB, budgetBytes: budget },
      );
      expect(ok.totalBytes).toBeLessThanOrEqual(budget);
    }
  });

  it('fails when one KV layer exceeds the storage binding limit', () => {
    expect(() =>
      planMemory(
        { ...model, contextLength: 1 << 20 },
        { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 4096 * MiB },
      ),
    ).toThrow(/at most 524288/);
  });

  it('sizes the KV cache per layer: each layer its own width, the widest one against the binding limit', () => {
    const kvLayers = [
      { nKvHeads: 2, headDim: 64 },
      { nKvHeads: 1, headDim: 64 },
      { nKvHeads: 4, headDim: 32 },
      { nKvHeads: 4, headDim: 64 },
    ];
    const plan = planMemory(
      { ...model, kvLayers, contextLength: 1024 },
      { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 4096 * MiB },
    );
    expect(plan.kvBytes).toBe(2 * 1024 * (128 + 64 + 128 + 256) * 2);
    expect(plan.kvLayerBytes).toBe(1024 * 256 * 2);
    expect(plan.maxContextLength).toBe(Math.floor((128 * MiB) / (256 * 2)));
  });

  it('rejects a type the WebGPU backend cannot run', () => {
    expect(() =>
      planMemory(
        { ...model, tensors: [{ name: 'x', type: GgmlType.TQ1_0, shape: [256, 2] }] },
        { maxStorageBufferBindingSize: MiB, maxBufferSize: MiB },
      ),
    ).toThrow(expect.objectContaining({ code: 'unsupported-type' }));
  });

  it('counts a 3-D expert stack whole and refuses one whose single expert exceeds the binding limit', () => {
    // Qwen3-30B-A3B-like layer: 128 experts of [2048 → 768] Q4_K (144 B per 256 values, repacked as is).
    const stack = { name: 'blk.0.ffn_gate_exps.weight', type: GgmlType.Q4_K, shape: [2048, 768, 128] };
    const limits = { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 4096 * MiB };
    const plan = planMemory({ ...model, tensors: [stack] }, limits);
    const expertBytes = 768 * (2048 / 256) * 144;
    expect(plan.weightBytes).toBe(128 * expertBytes); // split per expert at upload, counted once
    try {
      planMemory({ ...model, tensors: [stack] }, { ...limits, maxStorageBufferBindingSize: expertBytes - 1 });
      expect.unreachable();
    } catch (e) {
      expect(isLlmError(e, 'out-of-memory')).toBe(true);
      expect((e as Error).message).toContain('one expert of blk.0.ffn_gate_exps.weight');
    }
  });
});
