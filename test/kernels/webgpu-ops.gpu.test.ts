/**
 * WebGPU non-weight kernels vs the plain-TS reference backend (`createCpuOps`), on the f16+subgroups and
 * f32+shared-memory paths: RMSNorm (whole rows, per-head groups, in place), RoPE (norm/neox, partial rotary,
 * freq factors, linear scaling, YaRN, far positions), attention (prefill and split-K decode, GQA, sliding window,
 * soft-capping, copyKv to another slot), GLU, add, scale, softcap, copyRows, argmax and top-k with ties.
 * Each scenario runs the same Ops calls on both backends and compares the rows read back.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Activation, AttentionParams, Ops, RopeParams } from '../../src/backend/ops.js';
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

/** Loads `values` ([n, act.cols]) into `act` through an F32 table and embed (Ops has no host→activation write). */
async function setRows(ops: Ops, act: Activation, values: Float32Array, n: number): Promise<void> {
  const table = await ops.uploadWeight(
    { name: 'rows', type: GgmlType.F32, shape: [act.cols, n] },
    new Uint8Array(values.buffer.slice(0)),
  );
  ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(act, table, n);
  ops.endStep();
}

/** Runs `scenario` on the reference and on the GPU variant; returns both lists of results. */
async function both<T>(gpu: () => Promise<Ops>, scenario: (ops: Ops) => Promise<T[]>): Promise<[T[], T[]]> {
  const cpu = createCpuOps();
  const want = await scenario(cpu);
  cpu.destroy();
  const got = await scenario(await gpu());
  return [got, want];
}

async function norms(ops: Ops): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  const x = ops.createActivation('x', 3, 67);
  const y = ops.createActivation('y', 3, 67);
  await setRows(ops, x, randoms(3 * 67, 1), 3);
  const wv = randoms(67, 2);
  const w = await ops.uploadWeight({ name: 'norm.w', type: GgmlType.F32, shape: [67] }, new Uint8Array(wv.buffer));
  const h = ops.createActivation('h', 2, 48);
  await setRows(ops, h, randoms(2 * 48, 3), 2);
  const hv = randoms(16, 4);
  const hw = await ops.uploadWeight({ name: 'head.w', type: GgmlType.F32, shape: [16] }, new Uint8Array(hv.buffer));
  ops.beginStep({ tokens: new Int32Array(3), startPos: 0, slot: 0 });
  ops.rmsNorm(y, x, w, 1e-5, 3);
  ops.rmsNorm(x, x, null, 1e-6, 3); // in place, no weight
  ops.rmsNorm(h, h, hw, 1e-6, 2, 16); // per-head groups
  ops.endStep();
  out.push(await ops.read(y, 3), await ops.read(x, 3), await ops.read(h, 2));
  return out;
}

const ROPES: [string, RopeParams, number][] = [
  ['norm', { kind: 'norm', headDim: 16, nRot: 16, theta: 10000, freqScale: 1 }, 5],
  ['neox partial', { kind: 'neox', headDim: 16, nRot: 8, theta: 1e6, freqScale: 1 }, 5],
  [
    'norm freq factors + linear scale',
    {
      kind: 'norm',
      headDim: 16,
      nRot: 16,
      theta: 5e5,
      freqScale: 0.5,
      freqFactors: Float32Array.from({ length: 8 }, (_, i) => 1 + i),
    },
    7,
  ],
  [
    'neox yarn',
    {
      kind: 'neox',
      headDim: 16,
      nRot: 16,
      theta: 10000,
      freqScale: 0.25,
      yarn: { extFactor: 1, attnFactor: 1, betaFast: 32, betaSlow: 1, nCtxOrig: 64 },
    },
    9,
  ],
  ['norm far position', { kind: 'norm', headDim: 16, nRot: 16, theta: 10000, freqScale: 1 }, 3000],
];

async function ropes(ops: Ops): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (const [, params, startPos] of ROPES) {
    const x = ops.createActivation('x', 3, 48);
    await setRows(ops, x, randoms(3 * 48, 11), 3);
    ops.beginStep({ tokens: new Int32Array(3), startPos, slot: 0 });
    ops.rope(x, 3, params);
    ops.endStep();
    out.push(await ops.read(x, 3));
  }
  return out;
}

const ATTN: AttentionParams[] = [
  { nHeads: 4, nKvHeads: 2, headDim: 24, scale: 1 / Math.sqrt(24), slidingWindow: 0, softcap: 0 },
  { nHeads: 4, nKvHeads: 2, headDim: 24, scale: 0.3, slidingWindow: 40, softcap: 5 },
];

/** Prefill 150 positions, decode two more (split-K: ⌈151/64⌉ splits), then copy to slot 1 and decode there. */
async function attention(ops: Ops): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  ops.createKvCache({ nSlots: 2, contextLength: 300, layers: uniformKvLayers(2, 2, 24) });
  const N = 150;
  const q = ops.createActivation('q', N, 96);
  const k = ops.createActivation('k', N, 48);
  const v = ops.createActivation('v', N, 48);
  const o = ops.createActivation('o', N, 96);
  const tq = await ops.uploadWeight(
    { name: 'tq', type: GgmlType.F32, shape: [96, N + 3] },
    new Uint8Array(randoms(96 * (N + 3), 21).buffer),
  );
  const tk = await ops.uploadWeight(
    { name: 'tk', type: GgmlType.F32, shape: [48, N + 3] },
    new Uint8Array(randoms(48 * (N + 3), 22).buffer),
  );
  const tv = await ops.uploadWeight(
    { name: 'tv', type: GgmlType.F32, shape: [48, N + 3] },
    new Uint8Array(randoms(48 * (N + 3), 23).buffer),
  );
  const step = async (tokens: number[], startPos: number, slot: number): Promise<void> => {
    const n = tokens.length;
    ops.beginStep({ tokens: Int32Array.from(tokens), startPos, slot });
    ops.embed(q, tq, n);
    ops.embed(k, tk, n);
    ops.embed(v, tv, n);
    for (let layer = 0; layer < 2; layer++) {
      ops.storeKv(layer, k, v, n);
      ops.attention(o, q, layer, n, ATTN[layer]!);
      out.push(await ops.read(o, n));
    }
    ops.endStep();
  };
  await step(
    Array.from({ length: N }, (_, i) => i),
    0,
    0,
  );
  await step([N], N, 0);
  await step([N + 1], N + 1, 0);
  ops.copyKv(0, 1, N + 2);
  await step([N + 2], N + 2, 1);
  return out;
}

async function elementwise(ops: Ops): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  const C = 37;
  const a = ops.createActivation('a', 3, C);
  const b = ops.createActivation('b', 3, C);
  const c = ops.createActivation('c', 3, C);
  const reset = async (): Promise<void> => {
    await setRows(ops, a, randoms(3 * C, 31, 3), 3);
    await setRows(ops, b, randoms(3 * C, 32, 3), 3);
  };
  for (const act of ['silu', 'gelu'] as const) {
    await reset();
    ops.beginStep({ tokens: new Int32Array(3), startPos: 0, slot: 0 });
    ops.glu(c, a, b, 3, act);
    ops.endStep();
    out.push(await ops.read(c, 3));
    ops.beginStep({ tokens: new Int32Array(3), startPos: 0, slot: 0 });
    ops.glu(a, a, b, 3, act); // out === gate
    ops.glu(b, c, b, 3, act); // out === up
    ops.endStep();
    out.push(await ops.read(a, 3), await ops.read(b, 3));
  }
  await reset();
  ops.beginStep({ tokens: new Int32Array(3), startPos: 0, slot: 0 });
  ops.add(c, a, b, 3);
  ops.add(a, a, c, 3); // out === a
  ops.add(b, c, b, 3); // out === b
  ops.scale(c, -0.75, 3);
  ops.softcap(b, 2.5, 3);
  ops.endStep();
  out.push(await ops.read(a, 3), await ops.read(b, 3), await ops.read(c, 3));
  ops.beginStep({ tokens: new Int32Array(3), startPos: 0, slot: 0 });
  ops.copyRows(c, a, 2, 1);
  ops.endStep();
  out.push(await ops.read(c, 1));
  // With a destination row: into another buffer, and within one buffer (ranges apart).
  ops.beginStep({ tokens: new Int32Array(3), startPos: 0, slot: 0 });
  ops.copyRows(c, b, 0, 1, 2);
  ops.copyRows(a, a, 0, 1, 1);
  ops.endStep();
  out.push(await ops.read(c, 3), await ops.read(a, 3));
  return out;
}

/** argmax and top-k over 2500 values rounded to 0.1 (many ties; 3 top-k chunks). */
async function selection(ops: Ops): Promise<number[][]> {
  const V = 2500;
  const vals = randoms(2 * V, 41, 2).map((x) => Math.round(x * 10) / 10);
  const x = ops.createActivation('logits', 2, V);
  await setRows(ops, x, vals, 2);
  const res: number[][] = [[await ops.argmax(x, 0), await ops.argmax(x, 1)]];
  for (const k of [1, 7, 40]) {
    const t = await ops.topK(x, 1, k);
    res.push(Array.from(t.ids), Array.from(t.logits));
  }
  return res;
}

for (const variant of GPU_VARIANTS) {
  describe(`webgpu ops vs reference (${variant.name})`, () => {
    let gpuOps: WebGpuOps | null = null;
    const gpu = async (): Promise<Ops> => {
      if (!gpuOps) {
        gpuOps = await createWebGpuOps({
          gpu: await getTestGpu(),
          preferF16: variant.preferF16,
          useSubgroups: variant.useSubgroups,
        });
        created.push(gpuOps);
      }
      return gpuOps;
    };
    const isF16 = (): boolean => gpuOps?.description.includes('f16') ?? false;

    it('rmsNorm: rows, in place, per-head groups', async () => {
      const [got, want] = await both(gpu, norms);
      got.forEach((g, i) => expect(relMaxAbs(g, want[i]!), `case ${i}`).toBeLessThan(1e-5));
    });

    it('rope: norm, neox, partial, freq factors, scaling, yarn, far positions', async () => {
      const [got, want] = await both(gpu, ropes);
      // Angles are f32 on the GPU: the error grows with the position (≈ pos · 2⁻²⁴ rad).
      got.forEach((g, i) =>
        expect(relMaxAbs(g, want[i]!), ROPES[i]![0]).toBeLessThan(ROPES[i]![2] > 100 ? 2e-3 : 2e-5),
      );
    });

    it('attention: prefill, split-K decode, GQA, window, softcap, copyKv', async () => {
      const [got, want] = await both(gpu, attention);
      // The f16 path stores K/V in f16 (relative rounding 2⁻¹¹).
      const limit = isF16() ? 4e-3 : 2e-5;
      got.forEach((g, i) => expect(relMaxAbs(g, want[i]!), `result ${i}`).toBeLessThan(limit));
    });

    it('glu, add, scale, softcap, copyRows (with aliasing)', async () => {
      const [got, want] = await both(gpu, elementwise);
      got.forEach((g, i) => expect(relMaxAbs(g, want[i]!), `result ${i}`).toBeLessThan(1e-5));
    });

    it('argmax and topK (ties go to the lower index)', async () => {
      const [got, want] = await both(gpu, selection);
      expect(got).toEqual(want);
    });
  });
}

describe('webgpu device loss', () => {
  it('a destroyed device rejects pending and later work with device-lost', async () => {
    const device = await getTestDevice();
    const ops = await createWebGpuOps({ device });
    const x = ops.createActivation('x', 1, 1024);
    const pending = ops.read(x, 1);
    device.destroy();
    await expect(pending).rejects.toMatchObject({ code: 'device-lost' });
    await new Promise((r) => setTimeout(r, 10)); // device.lost settles
    expect(() => ops.beginStep({ tokens: new Int32Array(1), startPos: 0, slot: 0 })).toThrow(
      expect.objectContaining({ code: 'device-lost' }),
    );
    ops.destroy();
  });
});

describe('webgpu validation', () => {
  it('raised no uncaptured WebGPU errors', () => {
    expect(gpuErrors).toEqual([]);
  });
});
