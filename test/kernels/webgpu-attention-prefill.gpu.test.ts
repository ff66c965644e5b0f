/**
 * The tiled causal prefill attention kernel (attention_prefill.wgsl, used for steps of n ≥ 2 tokens) against the
 * plain-TS reference backend: odd chunk lengths (1, 3, 17, 100), second chunks after a cached prefix, GQA ratios
 * 1/2/4/7, sliding window, soft-capping, head dims 8/64/128/256 and an odd one (37), split-K for a few tokens after a
 * long prefix, f16 and f32 KV caches, on the device's raised workgroup-memory limit and on WebGPU's default 16 KiB;
 * plus the pure tile planner for every head dim.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { AttentionParams, Ops, Weight } from '../../src/backend/ops.js';
import {
  planPrefillAttention,
  prefillAttentionBytes,
  prefillAttentionGrid,
  prefillAttentionSplits,
} from '../../src/backend/webgpu/attention-prefill.js';
import { createWebGpuOps, type WebGpuOps } from '../../src/backend/webgpu/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import {
  collectGpuErrors,
  destroyTestGpu,
  getTestDevice,
  getTestGpu,
  GPU_VARIANTS,
  randoms,
  relMaxAbs,
} from '../helpers/gpu.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';

const created: WebGpuOps[] = [];
const gpuErrors = collectGpuErrors();
afterAll(() => {
  for (const o of created) o.destroy();
  destroyTestGpu();
});

/** One scenario: successive steps of `chunks[i]` tokens from position 0 of slot 0, every output row compared. */
interface Case {
  readonly name: string;
  readonly params: AttentionParams;
  readonly chunks: readonly number[];
  /** Per-head sink logits (gpt-oss), or none. */
  readonly sinks?: readonly number[];
}

function params(
  nHeads: number,
  nKvHeads: number,
  headDim: number,
  slidingWindow = 0,
  softcap = 0,
  scale = 1 / Math.sqrt(headDim),
): AttentionParams {
  return { nHeads, nKvHeads, headDim, scale, slidingWindow, softcap };
}

const CASES: readonly Case[] = [
  { name: 'GQA 1, hd 64, one chunk of 17', params: params(2, 2, 64), chunks: [17] },
  { name: 'GQA 2, hd 64, 5 then 3 then 1 (decode)', params: params(4, 2, 64), chunks: [5, 3, 1] },
  {
    name: 'GQA 4, hd 37, 20 then 100, window 30, softcap 20',
    params: params(4, 1, 37, 30, 20, 0.3),
    chunks: [20, 100],
  },
  { name: 'GQA 7, hd 64, 100 then 17', params: params(14, 2, 64), chunks: [100, 17] },
  { name: 'GQA 7, hd 64, window 8, softcap 5, 1 then 3 then 17', params: params(7, 1, 64, 8, 5), chunks: [1, 3, 17] },
  { name: 'GQA 2, hd 8 (stories260K), 100', params: params(8, 4, 8), chunks: [100] },
  { name: 'GQA 2, hd 128, 3 then 17, window 12', params: params(4, 2, 128, 12), chunks: [3, 17] },
  { name: 'GQA 1, hd 256, 17 then 3, softcap 30', params: params(2, 2, 256, 0, 30), chunks: [17, 3] },
  // Few tokens after a long prefix: split-K over the cached positions (isSoftware: false), some splits outside the window.
  { name: 'GQA 4, hd 64, 300 then 3 (split-K), softcap 10', params: params(8, 2, 64, 0, 10), chunks: [300, 3] },
  { name: 'GQA 2, hd 8, 600 then 2 then 2 (split-K), window 100', params: params(4, 2, 8, 100), chunks: [600, 2, 2] },
  // gpt-oss's sink logits: one split and split-K, the tiled kernel and the per-head decode kernel (GQA 1, n = 1).
  {
    name: 'sinks, GQA 2, hd 64, 5 then 3, window 4',
    params: params(4, 2, 64, 4),
    chunks: [5, 3],
    sinks: [2, -1, 0.5, 4],
  },
  {
    name: 'sinks, GQA 4, hd 64, 300 then 3 (split-K)',
    params: params(8, 2, 64),
    chunks: [300, 3],
    sinks: [1, -2, 0, 3, 1, 2, -1, 0.5],
  },
  {
    name: 'sinks, GQA 1, hd 64, 70 then 1 then 1 (decode kernel)',
    params: params(2, 2, 64),
    chunks: [70, 1, 1],
    sinks: [3, -0.5],
  },
];

/** Runs every case on `ops`; returns the output rows of every step of every case. */
async function runCases(ops: Ops): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  let seed = 100;
  for (const c of CASES) {
    const { nHeads, nKvHeads, headDim } = c.params;
    const total = c.chunks.reduce((a, b) => a + b, 0);
    const maxN = Math.max(...c.chunks);
    ops.createKvCache({ nSlots: 1, contextLength: total + 3, layers: uniformKvLayers(1, nKvHeads, headDim) });
    const qCols = nHeads * headDim;
    const kvCols = nKvHeads * headDim;
    const q = ops.createActivation('q', maxN, qCols);
    const k = ops.createActivation('k', maxN, kvCols);
    const v = ops.createActivation('v', maxN, kvCols);
    const o = ops.createActivation('o', maxN, qCols);
    // Rows by position: an F32 "embedding" table per tensor, gathered with the step's token ids = positions.
    const table = (name: string, cols: number): Promise<Weight> =>
      ops.uploadWeight(
        { name, type: GgmlType.F32, shape: [cols, total] },
        new Uint8Array(randoms(cols * total, seed++).buffer),
      );
    const tq = await table('tq', qCols);
    const tk = await table('tk', kvCols);
    const tv = await table('tv', kvCols);
    const sinks = c.sinks
      ? await ops.uploadWeight(
          { name: 'attn_sinks', type: GgmlType.F32, shape: [nHeads] },
          new Uint8Array(Float32Array.from(c.sinks).buffer),
        )
      : null;
    const p: AttentionParams = sinks ? { ...c.params, sinks } : c.params;
    let startPos = 0;
    for (const n of c.chunks) {
      ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => startPos + i), startPos, slot: 0 });
      ops.embed(q, tq, n);
      ops.embed(k, tk, n);
      ops.embed(v, tv, n);
      ops.storeKv(0, k, v, n);
      ops.attention(o, q, 0, n, p);
      ops.endStep();
      out.push(await ops.read(o, n));
      startPos += n;
    }
  }
  return out;
}

/** Step labels in the order runCases returns them. */
const STEP_LABELS = CASES.flatMap((c) => c.chunks.map((n, i) => `${c.name} — step ${i} (${n} tokens)`));

let reference: Float32Array[] | null = null;
async function getReference(): Promise<Float32Array[]> {
  if (!reference) {
    const cpu = createCpuOps();
    reference = await runCases(cpu);
    cpu.destroy();
  }
  return reference;
}

function expectClose(got: Float32Array[], want: Float32Array[], isF16: boolean): void {
  // The f16 path stores K/V in f16 (relative rounding 2⁻¹¹); f32 differs from the f64 reference by summation order.
  const limit = isF16 ? 4e-3 : 3e-5;
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => {
    expect(g.every(Number.isFinite), STEP_LABELS[i]).toBe(true);
    expect(relMaxAbs(g, want[i]!), STEP_LABELS[i]).toBeLessThan(limit);
  });
}

describe('prefill attention tile planner', () => {
  it('fits every head dim 1…256 in 16 KiB and 32 KiB, f16 and f32, with full rows per invocation', () => {
    for (const limit of [16384, 32768]) {
      for (const elem of [2, 4] as const) {
        for (let hd = 1; hd <= 256; hd++) {
          const t = planPrefillAttention(hd, 1000, elem, limit);
          expect(t, `hd ${hd} elem ${elem} limit ${limit}`).not.toBeNull();
          expect(t!.workgroupBytes).toBeLessThanOrEqual(limit);
          expect(t!.workgroupBytes).toBe(prefillAttentionBytes(hd, t!.rows, t!.keys, elem));
          expect(hd).toBeLessThanOrEqual(32 * (64 / t!.rows)); // the kernel's MAX_DPT · TPR
          expect(t!.keys).toBeGreaterThanOrEqual(4);
        }
      }
    }
  });

  it('picks the shapes of the benchmark models and sizes the grid', () => {
    expect(planPrefillAttention(64, 7 * 128, 2, 16384)).toMatchObject({ rows: 32, keys: 16 });
    expect(planPrefillAttention(64, 7 * 128, 2, 32768)).toMatchObject({ rows: 32, keys: 32 });
    expect(planPrefillAttention(8, 2 * 128, 4, 16384)).toMatchObject({ rows: 64, keys: 32 });
    // Few query rows: no workgroup with more than twice the rows it needs.
    expect(planPrefillAttention(8, 6, 4, 16384)!.rows).toBe(8);
    const t = planPrefillAttention(64, 7 * 100, 2, 16384)!;
    expect(prefillAttentionGrid(t, 100, 14, 2)).toEqual([Math.ceil(700 / t.rows), 2, 1]);
    expect(planPrefillAttention(0, 10, 4, 16384)).toBeNull();
    expect(planPrefillAttention(257, 10, 4, 16384)).toBeNull();
    expect(planPrefillAttention(64, 10, 4, 1024)).toBeNull();
    // Split-K: only when the tiles alone leave a GPU idle, each split ≥ 4 tiles, within the partial buffer.
    expect(prefillAttentionSplits(224, 128, 32, 32)).toBe(1);
    expect(prefillAttentionSplits(2, 4096, 32, 32)).toBe(32);
    expect(prefillAttentionSplits(2, 4096, 32, 8)).toBe(8);
    expect(prefillAttentionSplits(2, 300, 32, 32)).toBe(2);
    expect(prefillAttentionSplits(2, 100, 32, 32)).toBe(1);
  });
});

for (const variant of GPU_VARIANTS) {
  describe(`webgpu prefill attention vs reference (${variant.name})`, () => {
    it('chunks, cached prefixes, GQA, window, softcap, head dims (device limits)', async () => {
      // isSoftware: false takes the GPU kernel choices on lavapipe too.
      const ops = await createWebGpuOps({
        gpu: await getTestGpu(),
        preferF16: variant.preferF16,
        useSubgroups: variant.useSubgroups,
        isSoftware: false,
      });
      created.push(ops);
      console.log(`[gpu] ${ops.description}`);
      expectClose(await runCases(ops), await getReference(), ops.description.includes('f16'));
      ops.destroy(); // a live idle device slows Dawn's event polling for the next one (reads took seconds)
    });
  });
}

describe('webgpu prefill attention on default limits (16 KiB of workgroup memory)', () => {
  it('matches the reference with the smaller tiles', async () => {
    const device = await getTestDevice(['shader-f16' as GPUFeatureName]);
    expect(device.limits.maxComputeWorkgroupStorageSize).toBe(16384);
    for (const preferF16 of [true, false]) {
      const ops = await createWebGpuOps({ device, preferF16, useSubgroups: false, isSoftware: false });
      created.push(ops);
      expectClose(await runCases(ops), await getReference(), ops.description.includes('f16'));
    }
  });
});

describe('webgpu validation', () => {
  it('raised no uncaptured WebGPU errors', () => {
    expect(gpuErrors).toEqual([]);
  });
});
