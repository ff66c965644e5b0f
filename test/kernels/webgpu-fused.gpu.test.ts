/**
 * Fused kernels. rope_store (rope q + rope k + KV store in one dispatch, every adapter) against the CPU reference's
 * three separate ops, read back through attention. The software-adapter decode kernel gemv_bcast and its fusions
 * (RMSNorm folded in, residual accumulate, gate+up+GLU)
 * against an f64 reference over the dequantized weights, on the f16 and f32 element paths with subgroups and
 * `isSoftware: true`. Shapes are odd on purpose: one row, 37 and 70 rows (a partial second workgroup), one block per
 * row, n = 1 and 3 tokens, a weight split across bindings. Then full models (stories260K, its Q4_0 and Q8_0 derivatives)
 * through the fused forward pass must still match llama.cpp, greedy 30 tokens included.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Activation, Ops, RopeParams } from '../../src/backend/ops.js';
import { createWebGpuOps, type WebGpuOps } from '../../src/backend/webgpu/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import { runConformanceSuite } from '../helpers/conformance-suite.js';
import {
  collectGpuErrors,
  destroyTestGpu,
  getTestDevice,
  getTestGpu,
  makeWeight,
  nmseOf as nmse,
  randoms,
  relMaxAbs,
} from '../helpers/gpu.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';

/** rmsNorm(x)·w per row in f64 (x [n, k], w [k]). */
function normRef(x: Float32Array, w: Float32Array, k: number, n: number, eps: number): Float64Array {
  const out = new Float64Array(n * k); // (n, k)
  for (let t = 0; t < n; t++) {
    let ss = 0;
    for (let j = 0; j < k; j++) ss += x[t * k + j]! ** 2;
    const f = 1 / Math.sqrt(ss / k + eps);
    for (let j = 0; j < k; j++) out[t * k + j] = x[t * k + j]! * f * w[j]!;
  }
  return out;
}

/** out[t, r] = Σ_j w[r, j]·x[t, j] in f64. */
function matmulRef(w: Float32Array, x: ArrayLike<number>, k: number, nRows: number, n: number): Float64Array {
  const out = new Float64Array(n * nRows); // (n, nRows)
  for (let t = 0; t < n; t++) {
    for (let r = 0; r < nRows; r++) {
      let s = 0;
      for (let j = 0; j < k; j++) s += w[r * k + j]! * x[t * k + j]!;
      out[t * nRows + r] = s;
    }
  }
  return out;
}

const silu = (g: number): number => g / (1 + Math.exp(-g));
const gelu = (g: number): number => 0.5 * g * (1 + Math.tanh(0.7978845608028654 * g * (1 + 0.044715 * g * g)));

/** Writes `values` ([n, cols]) into `act` through an F32 embedding table (the only host→activation path of Ops). */
async function setRows(ops: Ops, act: Activation, values: Float32Array, n: number): Promise<void> {
  const table = await ops.uploadWeight(
    { name: `rows${values.length}`, type: GgmlType.F32, shape: [act.cols, n] },
    new Uint8Array(values.buffer.slice(0)),
  );
  ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(act, table, n);
  ops.endStep();
}

/** Random x [n, k] (seed) and out [n, nRows] (seed + 1, the residual an accumulating matmul adds to), set on `ops`. */
async function matmulInputs(
  ops: Ops,
  k: number,
  nRows: number,
  n: number,
  seed: number,
): Promise<{ xv: Float32Array; res0: Float32Array; x: Activation; out: Activation }> {
  const xv = randoms(n * k, seed);
  const res0 = randoms(n * nRows, seed + 1);
  const x = ops.createActivation('x', n, k);
  const out = ops.createActivation('o', n, nRows);
  await setRows(ops, x, xv, n);
  await setRows(ops, out, res0, n);
  return { xv, res0, x, out };
}

async function vector(
  ops: Ops,
  name: string,
  v: Float32Array,
): Promise<ReturnType<Ops['uploadWeight']> extends Promise<infer W> ? W : never> {
  return ops.uploadWeight({ name, type: GgmlType.F32, shape: [v.length] }, new Uint8Array(v.buffer.slice(0)));
}

const gpuErrors = collectGpuErrors();
const created: WebGpuOps[] = [];
afterAll(() => {
  for (const o of created) o.destroy();
  destroyTestGpu();
});

const ROPE_CASES: [string, RopeParams][] = [
  ['neox', { kind: 'neox', headDim: 16, nRot: 16, theta: 1e6, freqScale: 1 }],
  [
    'norm partial + yarn',
    {
      kind: 'norm',
      headDim: 16,
      nRot: 8,
      theta: 10000,
      freqScale: 0.5,
      yarn: { extFactor: 1, attnFactor: 1, betaFast: 32, betaSlow: 1, nCtxOrig: 64 },
    },
  ],
];

/** rope q and k, store k and v at positions 5…7 of slot 1 (one `ropeStoreKv` step), then attention over it. */
async function ropeStore(ops: Ops): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  ops.createKvCache({ nSlots: 2, contextLength: 16, layers: uniformKvLayers(2, 2, 16) });
  const n = 3;
  const [q, k, v, o] = [
    ops.createActivation('q', n, 64),
    ops.createActivation('k', n, 32),
    ops.createActivation('v', n, 32),
    ops.createActivation('o', n, 64),
  ];
  for (const [i, [, params]] of ROPE_CASES.entries()) {
    await setRows(ops, q, randoms(n * 64, 50 + i), n);
    await setRows(ops, k, randoms(n * 32, 60 + i), n);
    await setRows(ops, v, randoms(n * 32, 70 + i), n);
    ops.beginStep({ tokens: new Int32Array(n), startPos: 5, slot: 1 });
    ops.ropeStoreKv(i, q, k, v, n, params); // fused on WebGPU, rope + rope + storeKv (CompositeOps) on the reference
    ops.attention(o, q, i, n, { nHeads: 4, nKvHeads: 2, headDim: 16, scale: 0.25, slidingWindow: 0, softcap: 0 });
    ops.endStep();
    out.push(await ops.read(q, n), await ops.read(k, n), await ops.read(o, n));
  }
  return out;
}

describe('webgpu rope_store', () => {
  for (const preferF16 of [true, false]) {
    it(`matches rope + rope + storeKv of the reference (${preferF16 ? 'f16' : 'f32'} KV cache)`, async () => {
      const cpu = createCpuOps();
      const want = await ropeStore(cpu);
      cpu.destroy();
      const ops = await createWebGpuOps({ gpu: await getTestGpu(), preferF16, useSubgroups: false });
      created.push(ops);
      const got = await ropeStore(ops);
      const limit = ops.description.includes('f16') ? 4e-3 : 2e-5; // f16 KV rounding (2⁻¹¹) reaches attention
      got.forEach((g, i) =>
        expect(relMaxAbs(g, want[i]!), `${ROPE_CASES[Math.floor(i / 3)]![0]} result ${i % 3}`).toBeLessThan(
          i % 3 === 2 ? limit : 2e-5,
        ),
      );
    });
  }
});

/** Element paths run with subgroups on a software adapter (the kernel itself computes in f32 on both). */
const VARIANTS = [
  { name: 'f16+subgroups', preferF16: true },
  { name: 'f32+subgroups', preferF16: false },
];
/** The fast block products (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K), the generic one over load4 (Q3_K), and a float type. */
const TYPES = [GgmlType.Q4_0, GgmlType.Q8_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.Q3_K, GgmlType.F16];
const EPS = 1e-5;

for (const variant of VARIANTS) {
  describe(`webgpu gemv_bcast (${variant.name}, software)`, () => {
    let ops: WebGpuOps;
    beforeAll(async () => {
      ops = await createWebGpuOps({
        gpu: await getTestGpu(),
        preferF16: variant.preferF16,
        useSubgroups: true,
        isSoftware: true,
      });
      created.push(ops);
    });

    // The kernel computes in f32 on both paths, so the per-type cases run on the first one only (CPU budget).
    for (const type of variant.preferF16 ? TYPES : []) {
      const qt = getQuantType(type);
      it(`${qt.name}: plain, +bias, +norm, +accumulate match the reference`, async () => {
        // Row counts pick the workgroup size (16 below 256 rows, 32 below 2048, else 64), each with a partial group.
        const shapes: [number, number][] =
          qt.blockElements === 256
            ? [
                [256, 70],
                [768, 33],
              ]
            : type === GgmlType.Q4_0
              ? [
                  [32, 1],
                  [96, 70],
                  [64, 300],
                  [32, 2100],
                ]
              : [
                  [32, 1],
                  [96, 70],
                ];
        for (const [k, nRows] of shapes) {
          const { bytes, values } = makeWeight(type, k, nRows, 11 + k + nRows + type);
          const w = await ops.uploadWeight({ name: `${qt.name}.${k}x${nRows}`, type, shape: [k, nRows] }, bytes);
          const bv = randoms(nRows, 3);
          const nv = randoms(k, 4, 0.5);
          const [bias, nw] = [await vector(ops, 'b', bv), await vector(ops, 'nw', nv)];
          for (const n of [1, 3]) {
            const xv = randoms(n * k, 99 + n);
            const res0 = randoms(n * nRows, 5 + n);
            const x = ops.createActivation('x', n, k);
            const out = ops.createActivation('out', n, nRows);
            await setRows(ops, x, xv, n);
            const plain = matmulRef(values, xv, k, nRows, n);
            const normed = matmulRef(values, normRef(xv, nv, k, n, EPS), k, nRows, n);
            const cases = [
              { opts: {}, want: plain },
              { opts: { bias }, want: plain.map((v, i) => v + bv[i % nRows]!) },
              { opts: { norm: { weight: nw, eps: EPS } }, want: normed },
              {
                opts: { norm: { weight: nw, eps: EPS }, accumulate: true, bias },
                want: normed.map((v, i) => v + bv[i % nRows]! + res0[i]!),
              },
            ];
            for (const { opts, want } of cases) {
              await setRows(ops, out, res0, n);
              ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
              expect(ops.matmulFused(out, x, w, n, opts)).toBe(true);
              ops.endStep();
              expect(
                nmse(await ops.read(out, n), want),
                `${qt.name} [${k}×${nRows}] n=${n} ${Object.keys(opts).join('+')}`,
              ).toBeLessThan(1e-9);
            }
            // Plain matmul takes the same kernel on software adapters.
            ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
            ops.matmul(out, x, w, n, bias);
            ops.endStep();
            expect(
              nmse(
                await ops.read(out, n),
                plain.map((v, i) => v + bv[i % nRows]!),
              ),
            ).toBeLessThan(1e-9);
          }
        }
      });
    }

    for (const type of [GgmlType.Q4_0, GgmlType.Q8_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K]) {
      for (const act of ['silu', 'gelu'] as const) {
        it(`${getQuantType(type).name}: gate + up + ${act} in one pass, with and without the norm`, async () => {
          const [k, nRows] = getQuantType(type).blockElements === 256 ? [512, 70] : [96, 70];
          const g = makeWeight(type, k, nRows, 21);
          const u = makeWeight(type, k, nRows, 22);
          const gw = await ops.uploadWeight({ name: 'gate', type, shape: [k, nRows] }, g.bytes);
          const uw = await ops.uploadWeight({ name: 'up', type, shape: [k, nRows] }, u.bytes);
          const nv = randoms(k, 7, 0.5);
          const nw = await vector(ops, 'nw', nv);
          for (const n of [1, 2]) {
            const xv = randoms(n * k, 30 + n);
            const x = ops.createActivation('x', n, k);
            const out = ops.createActivation('out', n, nRows);
            await setRows(ops, x, xv, n);
            for (const norm of [null, { weight: nw, eps: EPS }]) {
              const xin = norm ? normRef(xv, nv, k, n, EPS) : xv;
              const gr = matmulRef(g.values, xin, k, nRows, n);
              const ur = matmulRef(u.values, xin, k, nRows, n);
              const f = act === 'gelu' ? gelu : silu;
              ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
              expect(ops.matmulGlu(out, x, gw, uw, n, act, norm)).toBe(true);
              ops.endStep();
              expect(
                nmse(
                  await ops.read(out, n),
                  gr.map((v, i) => f(v) * ur[i]!),
                ),
                `n=${n} norm=${norm !== null}`,
              ).toBeLessThan(1e-9);
            }
          }
        });
      }
    }

    it('declines what it cannot fuse: a K that is not whole blocks of 32, a Q3_K gate/up pair', async () => {
      const f = makeWeight(GgmlType.F32, 45, 3, 1);
      const w = await ops.uploadWeight({ name: 'f32.45', type: GgmlType.F32, shape: [45, 3] }, f.bytes);
      const x = ops.createActivation('x45', 1, 48);
      const out = ops.createActivation('o3', 1, 3);
      expect(ops.matmulFused(out, x, w, 1, {})).toBe(false);
      const q = makeWeight(GgmlType.Q3_K, 256, 4, 2);
      const qw = await ops.uploadWeight({ name: 'q3k', type: GgmlType.Q3_K, shape: [256, 4] }, q.bytes);
      const x2 = ops.createActivation('x256', 1, 256);
      const o2 = ops.createActivation('o4', 1, 4);
      expect(ops.matmulGlu(o2, x2, qw, qw, 1, 'silu', null)).toBe(false);
    });
  });
}

describe('webgpu gemv_bcast: other adapters and split weights', () => {
  it('the software no-subgroup path declines the fused ops; GPU kernels decline them for batches and ungrouped gate/up (unfused kernels run instead)', async () => {
    const gpu = await getTestGpu();
    for (const opts of [
      { isSoftware: false, useSubgroups: true },
      { isSoftware: true, useSubgroups: false },
      { isSoftware: false, useSubgroups: false },
    ]) {
      const ops = await createWebGpuOps({ gpu, preferF16: false, int8Dot: false, ...opts }); // f32 activations: exact
      created.push(ops);
      const q = makeWeight(GgmlType.Q4_0, 64, 5, 3);
      const w = await ops.uploadWeight({ name: 'q', type: GgmlType.Q4_0, shape: [64, 5] }, q.bytes);
      const x = ops.createActivation('x', 2, 64);
      const out = ops.createActivation('o', 2, 5);
      // GPU kernels fuse one-token products only (see webgpu-hardware-fused.gpu.test.ts).
      expect(ops.matmulFused(out, x, w, opts.isSoftware ? 1 : 2, { accumulate: true })).toBe(false);
      expect(ops.matmulGlu(out, x, w, w, 1, 'silu', null)).toBe(false);
    }
  });

  it('a weight split across bindings: every part accumulates into its own columns', async () => {
    const ops = await createWebGpuOps({
      gpu: await getTestGpu(),
      useSubgroups: true,
      isSoftware: true,
      maxBindingBytes: 1000,
    });
    created.push(ops);
    const [k, nRows, n] = [64, 37, 2]; // Q4_0 rows of one 80-byte group: parts of 12, 12, 12 + 1 rows
    const q = makeWeight(GgmlType.Q4_0, k, nRows, 8);
    const w = await ops.uploadWeight({ name: 'split', type: GgmlType.Q4_0, shape: [k, nRows] }, q.bytes);
    const { xv, res0, x, out } = await matmulInputs(ops, k, nRows, n, 9);
    ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
    expect(ops.matmulFused(out, x, w, n, { accumulate: true })).toBe(true);
    ops.endStep();
    const want = matmulRef(q.values, xv, k, nRows, n).map((v, i) => v + res0[i]!);
    expect(nmse(await ops.read(out, n), want)).toBeLessThan(1e-9);
  });
});

// The whole forward pass through the fused ops (norm → q/k/v, o + residual, gate/up/GLU, down + residual, final
// norm → lm head) on a software adapter: llama.cpp's logits and greedy tokens, both element paths.
for (const variant of VARIANTS) {
  let device: GPUDevice | null = null;
  runConformanceSuite(
    `webgpu fused software ${variant.name}`,
    async () => {
      device ??= await getTestDevice(['shader-f16', 'subgroups']);
      return createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: true, isSoftware: true });
    },
    {
      // The fast block products (Q4_0, Q8_0) and the generic one (F32 stories260K); the other derived types run
      // through the same generic dot32 as the Q4_K case above.
      filter: (f) =>
        f.id === 'stories260K.gguf' ||
        (variant.preferF16 && ['derived/stories260K-q4_0.gguf', 'derived/stories260K-q8_0.gguf'].includes(f.id)),
      tolerances: (base) => {
        const extra = variant.preferF16 ? 2e-2 : 0;
        return { ...base, dequantF32: Math.max(base.dequantF32, 2e-2) + extra, kvF32: base.kvF32 + extra };
      },
    },
  );
}

// Subgroups smaller than 8 (SwiftShader) load x per lane: forced here, since lavapipe's subgroups are 8 wide.
describe('webgpu gemv_bcast, per-lane x path (subgroups < 8)', () => {
  it('norm + bias, accumulate and gate/up/GLU match the reference', async () => {
    {
      const ops = await createWebGpuOps({
        gpu: await getTestGpu(),
        useSubgroups: true,
        isSoftware: true,
        bcastDirectLoads: true,
      });
      created.push(ops);
      const [k, nRows, n] = [96, 70, 2];
      const q = makeWeight(GgmlType.Q4_0, k, nRows, 31);
      const u = makeWeight(GgmlType.Q4_0, k, nRows, 32);
      const w = await ops.uploadWeight({ name: 'w', type: GgmlType.Q4_0, shape: [k, nRows] }, q.bytes);
      const uw = await ops.uploadWeight({ name: 'u', type: GgmlType.Q4_0, shape: [k, nRows] }, u.bytes);
      const bv = randoms(nRows, 33);
      const nv = randoms(k, 34, 0.5);
      const [bias, nw] = [await vector(ops, 'b', bv), await vector(ops, 'nw', nv)];
      const { xv, res0, x, out } = await matmulInputs(ops, k, nRows, n, 35);
      const xn = normRef(xv, nv, k, n, EPS);
      ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
      expect(ops.matmulFused(out, x, w, n, { norm: { weight: nw, eps: EPS }, bias, accumulate: true })).toBe(true);
      ops.endStep();
      const want = matmulRef(q.values, xn, k, nRows, n).map((v, i) => v + bv[i % nRows]! + res0[i]!);
      expect(nmse(await ops.read(out, n), want)).toBeLessThan(1e-9);
      ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
      expect(ops.matmulGlu(out, x, w, uw, n, 'silu', { weight: nw, eps: EPS })).toBe(true);
      ops.endStep();
      const ur = matmulRef(u.values, xn, k, nRows, n);
      expect(
        nmse(
          await ops.read(out, n),
          matmulRef(q.values, xn, k, nRows, n).map((v, i) => silu(v) * ur[i]!),
        ),
      ).toBeLessThan(1e-9);
    }
  });
});

describe('webgpu gemv_bcast validation', () => {
  it('raised no uncaptured WebGPU errors', () => {
    expect(gpuErrors).toEqual([]);
  });
});
