/**
 * The reference backend's ops against hand-written expectations: rope (NORM, NEOX, partial, frequency factors),
 * attention (causal, GQA, sliding window, soft-cap), norms, matmul with bias, GLU, top-k ties and upload checks.
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Activation, Ops, RopeParams, Weight } from '../../src/backend/ops.js';
import { isLlmError } from '../../src/errors.js';
import { GgmlType } from '../../src/gguf/types.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';

const f32Bytes = (values: number[]): Uint8Array => new Uint8Array(Float32Array.from(values).buffer);

async function weight(ops: Ops, name: string, shape: number[], values: number[]): Promise<Weight> {
  return ops.uploadWeight({ name, type: GgmlType.F32, shape }, f32Bytes(values));
}

async function act(ops: Ops, label: string, rows: number, cols: number, values?: number[]): Promise<Activation> {
  const a = ops.createActivation(label, rows, cols);
  if (values) {
    // Fill through the ops: embed rows of a table holding `values`.
    const table = await weight(ops, `${label}_init`, [cols, rows], values);
    ops.beginStep({ tokens: Int32Array.from({ length: rows }, (_, i) => i), startPos: 0, slot: 0 });
    ops.embed(a, table, rows);
    ops.endStep();
  }
  return a;
}

const rope = (over: Partial<RopeParams>): RopeParams => ({
  kind: 'norm',
  headDim: 4,
  nRot: 4,
  theta: 10000,
  freqScale: 1,
  ...over,
});

describe('cpu reference ops', () => {
  it('rope: position 0 is the identity; NORM rotates adjacent pairs, NEOX halves', async () => {
    const ops = createCpuOps();
    const x = await act(ops, 'x', 2, 4, [1, 2, 3, 4, 1, 0, 0, 0]);
    ops.beginStep({ tokens: Int32Array.of(0, 0), startPos: 0, slot: 0 });
    ops.rope(x, 2, rope({}));
    ops.endStep();
    const out = await ops.read(x, 2);
    expect(Array.from(out.subarray(0, 4))).toEqual([1, 2, 3, 4]);
    // row 1 at position 1: pair 0 angle 1 rad, pair 1 angle 10000^(-1/2) = 0.01 rad.
    expect(out[4]).toBeCloseTo(Math.cos(1), 6);
    expect(out[5]).toBeCloseTo(Math.sin(1), 6);

    const y = await act(ops, 'y', 1, 4, [1, 0, 0, 0]);
    ops.beginStep({ tokens: Int32Array.of(0), startPos: 3, slot: 0 });
    ops.rope(y, 1, rope({ kind: 'neox', freqScale: 0.5, freqFactors: Float32Array.of(2, 1) }));
    ops.endStep();
    const o = await ops.read(y, 1);
    // NEOX pairs (0, 2): angle = pos · freqScale / factor = 3 · 0.5 / 2.
    expect(o[0]).toBeCloseTo(Math.cos(0.75), 6);
    expect(o[2]).toBeCloseTo(Math.sin(0.75), 6);
    expect(o[1]).toBe(0);
  });

  it('rope: YaRN keeps fast pairs extrapolated, interpolates slow ones and scales the magnitude', async () => {
    const ops = createCpuOps();
    const x = await act(ops, 'x', 1, 8, [1, 0, 1, 0, 0, 0, 1, 0]);
    ops.beginStep({ tokens: Int32Array.of(0), startPos: 1, slot: 0 });
    // Correction dims for nRot 8, original context 64, betas 32/1: [0, 2].
    ops.rope(
      x,
      1,
      rope({
        headDim: 8,
        nRot: 8,
        freqScale: 0.25,
        yarn: { extFactor: 1, attnFactor: 1, betaFast: 32, betaSlow: 1, nCtxOrig: 64 },
      }),
    );
    ops.endStep();
    const o = await ops.read(x, 1);
    const m = 1 + 0.1 * Math.log(4);
    expect(o[0]).toBeCloseTo(Math.cos(1) * m, 6); // pair 0: extrapolated (theta = pos)
    expect(o[1]).toBeCloseTo(Math.sin(1) * m, 6);
    const t1 = 0.5 * 0.1 + 0.5 * 0.1 * 0.25; // pair 1: half-way on the ramp
    expect(o[2]).toBeCloseTo(Math.cos(t1) * m, 6);
    expect(o[7]).toBeCloseTo(Math.sin(0.25 * 10000 ** -0.75) * m, 6); // pair 3: interpolated
  });

  it('rope: dimensions past nRot pass through', async () => {
    const ops = createCpuOps();
    const x = await act(ops, 'x', 1, 4, [1, 1, 5, 6]);
    ops.beginStep({ tokens: Int32Array.of(0), startPos: 2, slot: 0 });
    ops.rope(x, 1, rope({ nRot: 2 }));
    ops.endStep();
    const o = await ops.read(x, 1);
    expect(o[2]).toBe(5);
    expect(o[3]).toBe(6);
    expect(o[0]).toBeCloseTo(Math.cos(2) - Math.sin(2), 6);
  });

  it('attention: causal GQA softmax over the cache, sliding window and soft-cap', async () => {
    const ops = createCpuOps();
    ops.createKvCache({ nSlots: 1, contextLength: 4, layers: uniformKvLayers(1, 1, 2) });
    const k = await act(ops, 'k', 3, 2, [1, 0, 0, 1, 1, 1]);
    const v = await act(ops, 'v', 3, 2, [1, 2, 3, 4, 5, 6]);
    const q = await act(ops, 'q', 3, 4, [1, 0, 0, 1, 2, 0, 0, 2, 1, 1, -1, 1]); // 2 query heads share kv head 0
    const out = ops.createActivation('out', 3, 4);
    const naive = (qv: number[], keys: number[][], vals: number[][], scale: number, cap: number): number[] => {
      const s = keys.map((kk) => {
        const d = (qv[0] * kk[0] + qv[1] * kk[1]) * scale;
        return cap > 0 ? cap * Math.tanh(d / cap) : d;
      });
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      return [0, 1].map((j) => vals.reduce((acc, vv, i) => acc + (e[i] / z) * vv[j], 0));
    };
    const K = [
      [1, 0],
      [0, 1],
      [1, 1],
    ];
    const V = [
      [1, 2],
      [3, 4],
      [5, 6],
    ];
    for (const [slidingWindow, softcap] of [
      [0, 0],
      [2, 0],
      [0, 0.7],
    ]) {
      ops.beginStep({ tokens: Int32Array.of(0, 0, 0), startPos: 0, slot: 0 });
      ops.storeKv(0, k, v, 3);
      ops.attention(out, q, 0, 3, { nHeads: 2, nKvHeads: 1, headDim: 2, scale: 0.5, slidingWindow, softcap });
      ops.endStep();
      const o = await ops.read(out, 3);
      const qs = [
        [1, 0],
        [0, 1],
        [2, 0],
        [0, 2],
        [1, 1],
        [-1, 1],
      ];
      for (let row = 0; row < 3; row++) {
        const first = slidingWindow > 0 ? Math.max(0, row - slidingWindow + 1) : 0;
        for (let h = 0; h < 2; h++) {
          const want = naive(qs[row * 2 + h], K.slice(first, row + 1), V.slice(first, row + 1), 0.5, softcap);
          expect(o[row * 4 + h * 2]).toBeCloseTo(want[0], 6);
          expect(o[row * 4 + h * 2 + 1]).toBeCloseTo(want[1], 6);
        }
      }
    }
  });

  it('rmsNorm per group, matmul with bias, glu, add, scale, softcap, copyRows', async () => {
    const ops = createCpuOps();
    const x = await act(ops, 'x', 1, 4, [1, 1, 3, 3]);
    const out = ops.createActivation('o', 1, 4);
    const w = await weight(ops, 'w', [2], [2, 3]);
    ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
    ops.rmsNorm(out, x, w, 0, 1, 2);
    ops.endStep();
    expect(Array.from(await ops.read(out, 1))).toEqual([2, 3, 2, 3]);

    const m = await weight(ops, 'm', [4, 2], [1, 0, 0, 0, 0, 1, 1, 1]);
    const b = await weight(ops, 'b', [2], [0.5, -1]);
    const y = ops.createActivation('y', 1, 2);
    ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
    ops.matmul(y, x, m, 1, b);
    ops.endStep();
    expect(Array.from(await ops.read(y, 1))).toEqual([1.5, 6]);

    const g = await act(ops, 'g', 1, 2, [0, 1]);
    const u = await act(ops, 'u', 1, 2, [2, 2]);
    const r = ops.createActivation('r', 1, 2);
    ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
    ops.glu(r, g, u, 1, 'silu');
    ops.endStep();
    const silu = await ops.read(r, 1);
    expect(silu[0]).toBe(0);
    expect(silu[1]).toBeCloseTo(2 / (1 + Math.exp(-1)), 6);
    ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
    ops.glu(r, g, u, 1, 'gelu');
    ops.add(r, r, u, 1);
    ops.scale(r, 2, 1);
    ops.softcap(r, 3, 1);
    ops.endStep();
    const gelu1 = 0.5 * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * 1.044715));
    const expected = [(2 + 0) * 2, (2 * gelu1 + 2) * 2].map((v) => 3 * Math.tanh(v / 3));
    const got = await ops.read(r, 1);
    expect(got[0]).toBeCloseTo(expected[0], 6);
    expect(got[1]).toBeCloseTo(expected[1], 6);

    const two = await act(ops, 'two', 2, 2, [1, 2, 3, 4]);
    const one = ops.createActivation('one', 1, 2);
    ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
    ops.copyRows(one, two, 1, 1);
    ops.endStep();
    expect(Array.from(await ops.read(one, 1))).toEqual([3, 4]);
  });

  it('argmax and topK break ties towards the lower index', async () => {
    const ops = createCpuOps();
    const x = await act(ops, 'x', 1, 6, [1, 5, 3, 5, 5, -1]);
    expect(await ops.argmax(x, 0)).toBe(1);
    const top = await ops.topK(x, 0, 4);
    expect(Array.from(top.ids)).toEqual([1, 3, 4, 2]);
    expect(Array.from(top.logits)).toEqual([5, 5, 5, 3]);
  });

  it('upload dequantizes through the quant registry and rejects short data', async () => {
    const ops = createCpuOps();
    const half = new Uint8Array(new Uint16Array([0x3c00, 0xc000]).buffer); // f16 1, −2
    const w = await ops.uploadWeight({ name: 'h', type: GgmlType.F16, shape: [2] }, half);
    const x = await act(ops, 'x', 1, 2, [3, 1]);
    const y = ops.createActivation('y', 1, 1);
    ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
    ops.matmul(y, x, w, 1);
    ops.endStep();
    expect((await ops.read(y, 1))[0]).toBe(1);
    const err = await ops
      .uploadWeight({ name: 'bad', type: GgmlType.F32, shape: [4, 2] }, new Uint8Array(16))
      .catch((e) => e);
    expect(isLlmError(err, 'gguf-invalid')).toBe(true);
    expect(String(err.message)).toContain('bad');
  });

  it('storeKv past the context is a context-overflow error', async () => {
    const ops = createCpuOps();
    ops.createKvCache({ nSlots: 1, contextLength: 2, layers: uniformKvLayers(1, 1, 2) });
    const k = ops.createActivation('k', 2, 2);
    ops.beginStep({ tokens: Int32Array.of(0, 0), startPos: 1, slot: 0 });
    expect(() => ops.storeKv(0, k, k, 2)).toThrow(/context holds 2/);
  });
});
