/**
 * GPU top-k by radix select (shaders/kernels/topk_radix.wgsl, issue 23) against the reference top-k (topKScan, what
 * CpuOps.topK and the WASM kernel return) on adversarial rows: many ties, all equal, ±∞, −0 next to +0, extremes and
 * subnormals, k = 1 and k = vocabulary, vocabularies that are not a multiple of the workgroup, a row after the first;
 * NaN under its stated policy (below −∞); and seeded top-k sampling drawing the same tokens from either top-k.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { topKScan } from '../../src/backend/cpu/top-k.js';
import type { Activation, Ops, TopK } from '../../src/backend/ops.js';
import { createWebGpuOps, type WebGpuOps } from '../../src/backend/webgpu/index.js';
import { DEFAULT_SAMPLING, Sampler } from '../../src/engine/sampler.js';
import { GgmlType } from '../../src/gguf/types.js';
import { collectGpuErrors, destroyTestGpu, getTestGpu, GPU_VARIANTS, randoms } from '../helpers/gpu.js';

const created: WebGpuOps[] = [];
const gpuErrors = collectGpuErrors();
afterAll(() => {
  for (const o of created) o.destroy();
  destroyTestGpu();
});

/** A [2, cols] activation holding `row1` in row 1 (row 0 is a decoy of larger values). */
async function logitsRow(ops: Ops, row1: Float32Array): Promise<Activation> {
  const cols = row1.length;
  const values = new Float32Array(2 * cols);
  values.fill(1e30, 0, cols);
  values.set(row1, cols);
  const table = await ops.uploadWeight(
    { name: `logits${cols}.${row1[0]}`, type: GgmlType.F32, shape: [cols, 2] },
    new Uint8Array(values.buffer),
  );
  const x = ops.createActivation('logits', 2, cols);
  ops.beginStep({ tokens: Int32Array.of(0, 1), startPos: 0, slot: 0 });
  ops.embed(x, table, 2);
  ops.endStep();
  return x;
}

/** Bit patterns, so that −0, NaN and ∞ compare exactly. */
function bits(t: TopK): { ids: number[]; logits: number[] } {
  return { ids: Array.from(t.ids), logits: Array.from(new Uint32Array(Float32Array.from(t.logits).buffer)) };
}

/** Policy reference with NaN: values descending, NaN below −∞, −0 = +0, ties by lower index. */
function nanPolicyTopK(d: Float32Array, k: number): TopK {
  const rank = (v: number): number => (Number.isNaN(v) ? -Infinity : v);
  const order = Array.from(d.keys()).sort((a, b) => {
    const va = d[a]!;
    const vb = d[b]!;
    if (Number.isNaN(va) !== Number.isNaN(vb)) return Number.isNaN(va) ? 1 : -1;
    return rank(vb) - rank(va) || a - b;
  });
  const ids = Int32Array.from(order.slice(0, k));
  return { ids, logits: Float32Array.from(ids, (j) => d[j]!) };
}

/** Adversarial rows, each with the k values to ask for. */
function rows(): [string, Float32Array, number[]][] {
  const ties = randoms(1000, 3, 2).map((v) => Math.round(v * 10) / 10);
  const signs = Float32Array.from({ length: 777 }, (_, i) => [0, -0, 1, -1, Infinity, -Infinity, 0.5][i % 7]!);
  const extremes = Float32Array.from({ length: 300 }, (_, i) =>
    i % 5 === 0 ? 3.4e38 : i % 5 === 1 ? -3.4e38 : i % 5 === 2 ? 1e-45 : i % 5 === 3 ? -1e-45 : (i % 17) - 8,
  );
  const wide = randoms(5003, 9, 30);
  return [
    ['rounded to 0.1 (many ties)', ties, [1, 7, 40, 256]],
    ['all equal', new Float32Array(777).fill(-2.5), [1, 50, 256]],
    ['±0, ±∞ and repeats', signs, [1, 3, 112, 256]],
    ['extremes and subnormals', extremes, [1, 61, 250]],
    ['k = vocabulary', randoms(200, 5).map((v) => Math.round(v)), [200]],
    ['distinct values, 5003 wide', wide, [1, 40, 256]],
    ['all −∞', new Float32Array(259).fill(-Infinity), [5, 256]],
  ];
}

for (const variant of GPU_VARIANTS) {
  describe(`topk_radix (${variant.name})`, () => {
    it('equals the reference top-k on adversarial rows', async () => {
      const ops = await createWebGpuOps({
        gpu: await getTestGpu(),
        preferF16: variant.preferF16,
        useSubgroups: variant.useSubgroups,
      });
      created.push(ops);
      for (const [name, row, ks] of rows()) {
        const x = await logitsRow(ops, row);
        for (const k of ks) {
          expect(bits(await ops.topK(x, 1, k)), `${name}, k = ${k}`).toEqual(bits(topKScan(row, k)));
        }
      }
      // NaN ranks below −∞: the k best are the non-NaN values, NaN fills in (lowest index first) past them.
      const withNan = Float32Array.from({ length: 301 }, (_, i) =>
        i % 3 === 0 ? NaN : i % 7 === 0 ? -Infinity : i % 11,
      );
      const x = await logitsRow(ops, withNan);
      for (const k of [1, 40, 200, 256]) {
        expect(bits(await ops.topK(x, 1, k)), `NaN row, k = ${k}`).toEqual(bits(nanPolicyTopK(withNan, k)));
      }
      await expect(ops.topK(x, 1, 0)).rejects.toMatchObject({ code: 'invalid-request' });
      await expect(ops.topK(x, 1, 302)).rejects.toMatchObject({ code: 'invalid-request' });
      expect(gpuErrors).toEqual([]);
    }, 300_000);
  });
}

describe('seeded top-k sampling', () => {
  it('draws the same tokens from the GPU top-k as from the reference', async () => {
    const ops = await createWebGpuOps({ gpu: await getTestGpu() });
    created.push(ops);
    const vocab = 3001;
    const rowsIn = Array.from({ length: 6 }, (_, i) => randoms(vocab, 20 + i, 3).map((v) => Math.round(v * 4) / 4));
    const params = { ...DEFAULT_SAMPLING, temperature: 0.9, topK: 40, topP: 0.95, minP: 0.02, seed: 1234 };
    const draw = async (topK: (row: Float32Array, k: number) => Promise<TopK>): Promise<number[]> => {
      const sampler = new Sampler(params, vocab);
      expect(sampler.route).toBe('top-k');
      const out: number[] = [];
      for (const row of rowsIn) {
        const source = {
          readLogits: async () => row,
          argmax: async () => topKScan(row, 1).ids[0]!,
          topK: (k: number) => topK(row, k),
        };
        out.push(await sampler.sample(source, out));
      }
      return out;
    };
    const want = await draw(async (row, k) => topKScan(row, k));
    const got = await draw(async (row, k) => ops.topK(await logitsRow(ops, row), 1, k));
    expect(got).toEqual(want);
  }, 300_000);
});
