/**
 * Structural targets of the hardware kernel set (issue 23), counted by the backend's profiler on lavapipe with the
 * hardware kernels forced: a Qwen2.5-shaped Q4_0 model (GQA 7:1 scaled down, QKV biases, tied embeddings) written at
 * test time, a 70-token prefill chunk (past 64 positions, where decode attention splits), then one decode token.
 * Decode: ≤ 8 dispatches per layer (plus a constant), one submission, ≤ 8 bytes read back, every matmul launching
 * ≥ 4 subgroups per MiB of weights, weight bytes loaded ≤ 1.01 × the GGUF's, K/V bytes read ≤ 1.1 × the K/V bytes attended. Counts, not timings.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeSyntheticModel } from '../../scripts/synthetic-model.js';
import { createWebGpuOps, type StepProfile } from '../../src/backend/webgpu/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { collectGpuErrors, destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';

const dir = mkdtempSync(path.join(tmpdir(), 'webgguf-profile-'));
afterAll(() => {
  destroyTestGpu();
  rmSync(dir, { recursive: true, force: true });
});
const gpuErrors = collectGpuErrors();

const N_LAYER = 3;
const PREFILL = 70;

async function profileModel(
  preferF16: boolean,
  useSubgroups: boolean,
): Promise<{ decode: StepProfile; prefill: StepProfile }> {
  const file = path.join(dir, 'qwen2-q4_0.gguf');
  await writeSyntheticModel({
    arch: 'qwen2',
    quant: GgmlType.Q4_0,
    out: file,
    shape: { nEmbd: 448, nHead: 7, nHeadKv: 1, headDim: 64, nFf: 1216, nLayer: N_LAYER, tied: true },
  });
  const source = await NodeFileSource.open(file);
  const device = await getTestDevice(['shader-f16', 'subgroups']);
  const ops = await createWebGpuOps({ device, preferF16, useSubgroups, kernels: 'hardware' });
  try {
    const gguf = await parseGguf(source);
    const model = await loadTransformer(gguf, source, ops, { contextLength: PREFILL + 1, ubatchSize: PREFILL });
    const tokens = Int32Array.from({ length: PREFILL }, (_, i) => (i * 37 + 5) % model.config.vocabSize);
    ops.beginProfile();
    await model.eval(tokens, 0, 0, { logits: 'last' });
    const next = await model.argmax();
    const prefill = ops.endProfile(N_LAYER, PREFILL);
    ops.beginProfile();
    await model.eval(Int32Array.of(next), PREFILL, 0, { logits: 'last' });
    await model.argmax();
    return { decode: ops.endProfile(N_LAYER, 1), prefill };
  } finally {
    ops.destroy();
    await source.close();
  }
}

describe('hardware kernel set: structural profile (Qwen2.5-shaped Q4_0)', () => {
  it('decode on f16+subgroups: ≤ 8 dispatches per layer, 1 submission, ≤ 8 bytes read back, fused GEMVs', async () => {
    const { decode, prefill } = await profileModel(true, true);
    console.log(
      `[profile] decode ${decode.dispatches} dispatches (${decode.dispatchesPerLayer.toFixed(2)}/layer), kernels ${JSON.stringify(decode.kernels)}`,
    );
    expect(decode.dispatches).toBeLessThanOrEqual(8 * N_LAYER + 6);
    expect(decode.submissions).toBe(1);
    expect(decode.readbackBytes).toBeLessThanOrEqual(8);
    // One Q|K|V dispatch, one gate·up·GLU dispatch, wo and down accumulating into the residual.
    expect(decode.matmuls.filter((m) => m.name.includes('attn_q') && m.name.includes('attn_v'))).toHaveLength(N_LAYER);
    expect(decode.matmuls.filter((m) => m.kernel.includes('glu'))).toHaveLength(N_LAYER);
    expect(
      Object.keys(decode.kernels).some((k) => k.startsWith('rms_norm') || k.startsWith('add') || k.startsWith('glu.')),
    ).toBe(false);
    for (const m of decode.matmuls) expect(m.subgroupsPerMiB, m.name).toBeGreaterThanOrEqual(4);
    // Decode attention: each K/V byte read once for the 7 query heads of its KV head (7× on the per-query-head kernel).
    expect(decode.kvBytesRead / decode.kvBytes).toBeLessThanOrEqual(1.1);
    expect(prefill.submissions).toBe(1);
    // Row-split Q4_0/Q8_0 uploads: the kernels load exactly the GGUF's bytes (the grouped layout cost +11 % / +5.9 %).
    expect(decode.weightBytesLogical).toBeGreaterThan(0);
    expect(decode.weightBytesLoaded / decode.weightBytesLogical).toBeLessThanOrEqual(1.01);
    // Two regions per binding (bodies, then scales): every row starts 16-byte aligned (the rows' own scales after
    // their bodies put every other K = 896 Q4_0 row 8 bytes off).
    for (const m of decode.matmuls) expect(m.rowAlign, m.name).toBe(16);
    expect(gpuErrors).toEqual([]);
  });

  it('the f32 path without subgroups (Firefox, Safari: the fused gemv) meets the same decode targets', async () => {
    const variant = GPU_VARIANTS.find((v) => !v.useSubgroups)!;
    const { decode } = await profileModel(variant.preferF16, variant.useSubgroups);
    // gemv's split (gemv-shape.ts): R = 4 rows share each chunk of x', so ≥ 4 rows per 64-lane workgroup (was 1).
    for (const m of decode.matmuls) {
      expect(m.kernel, m.name).toMatch(/^gemv\./);
      expect(m.lanes, m.name).toBe(64);
      expect(m.rowsPerWorkgroup, m.name).toBeGreaterThanOrEqual(4);
    }
    expect(decode.dispatches).toBeLessThanOrEqual(8 * N_LAYER + 6);
    expect(decode.submissions).toBe(1);
    expect(decode.readbackBytes).toBeLessThanOrEqual(8);
    expect(decode.weightBytesLoaded / decode.weightBytesLogical).toBeLessThanOrEqual(1.01);
    expect(decode.kvBytesRead / decode.kvBytes).toBeLessThanOrEqual(1.1);
    expect(gpuErrors).toEqual([]);
  });
});
