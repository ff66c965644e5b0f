/**
 * The hardware kernel set's fused decode GEMV (gemv_sg with HAS_NORM / ACCUMULATE / IS_GLU, and Q|K|V in one
 * dispatch) and its no-subgroup twin gemv against f64 references over the dequantized weights, forced on lavapipe
 * (`kernels: 'hardware'`), f16 and f32 element paths with subgroups and the f32 path without. Grouped weights are
 * recognised by their GGUF names (`blk.N.attn_q.weight` …) and uploaded into one buffer at aligned offsets; the other kernels (gemm for batches) still read each member alone.
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { Activation, Ops, Weight } from '../../src/backend/ops.js';
import { createWebGpuOps, type WebGpuOps } from '../../src/backend/webgpu/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { collectGpuErrors, destroyTestGpu, getTestGpu, makeWeight, nmseOf, randoms } from '../helpers/gpu.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';

const gpuErrors = collectGpuErrors();
const created: WebGpuOps[] = [];
afterAll(() => {
  for (const o of created) o.destroy();
  destroyTestGpu();
});

/** rmsNorm(x)·w (x [k]) in f64; identity scale without w. */
function normRef(x: Float32Array, w: Float32Array | null, eps: number): Float64Array {
  let ss = 0;
  for (const v of x) ss += v * v;
  const f = 1 / Math.sqrt(ss / x.length + eps);
  return Float64Array.from(x, (v, j) => v * f * (w ? w[j]! : 1));
}

function matvec(w: Float32Array, x: ArrayLike<number>, k: number, nRows: number): Float64Array {
  const out = new Float64Array(nRows); // (nRows)
  for (let r = 0; r < nRows; r++) for (let j = 0; j < k; j++) out[r] += w[r * k + j]! * x[j]!;
  return out;
}

async function setRow(ops: Ops, act: Activation, values: Float32Array): Promise<void> {
  const table = await ops.uploadWeight(
    { name: `row${values.length}.${Math.random()}`, type: GgmlType.F32, shape: [act.cols, 1] },
    new Uint8Array(values.buffer.slice(0)),
  );
  ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
  ops.embed(act, table, 1);
  ops.endStep();
}

async function vector(ops: Ops, name: string, v: Float32Array): Promise<Weight> {
  return ops.uploadWeight({ name, type: GgmlType.F32, shape: [v.length] }, new Uint8Array(v.buffer.slice(0)));
}

const PATHS = [
  { name: 'f16+subgroups', preferF16: true, useSubgroups: true },
  { name: 'f32+subgroups', preferF16: false, useSubgroups: true },
  { name: 'f32+shared (gemv: Firefox, Safari)', preferF16: false, useSubgroups: false },
];

describe('hardware fused GEMV (gemv_sg)', () => {
  for (const path of PATHS) {
    for (const type of [GgmlType.Q4_0, GgmlType.Q4_K]) {
      it(`${path.name} ${GgmlType[type]}: Q|K|V with norm and biases in one dispatch; gate·up·GLU; accumulate`, async () => {
        const ops = await createWebGpuOps({
          gpu: await getTestGpu(),
          preferF16: path.preferF16,
          useSubgroups: path.useSubgroups,
          kernels: 'hardware',
          maxBindingBytes: 1 << 20,
          int8Dot: false, // f32 activations: exact against the f32 reference (Q8 activations: webgpu-int8-dot)
        });
        created.push(ops);
        const k = 512;
        const [nq, nkv, nff] = [96, 32, 80]; // rows: not multiples of the 16-row workgroup
        const eps = 1e-5;
        const xv = randoms(k, 1);
        const normW = randoms(k, 2, 0.5).map((v) => 1 + v);
        const mats = {
          q: makeWeight(type, k, nq, 3),
          k: makeWeight(type, k, nkv, 4),
          v: makeWeight(type, k, nkv, 5),
          gate: makeWeight(type, k, nff, 6),
          up: makeWeight(type, k, nff, 7),
        };
        const biases = { q: randoms(nq, 8), k: randoms(nkv, 9), v: randoms(nkv, 10) };
        const up = async (name: string, m: { bytes: Uint8Array }, rows: number): Promise<Weight> =>
          ops.uploadWeight({ name, type, shape: [k, rows] }, m.bytes);
        const wq = await up('blk.0.attn_q.weight', mats.q, nq);
        const wk = await up('blk.0.attn_k.weight', mats.k, nkv);
        const wv = await up('blk.0.attn_v.weight', mats.v, nkv);
        const wgate = await up('blk.0.ffn_gate.weight', mats.gate, nff);
        const wup = await up('blk.0.ffn_up.weight', mats.up, nff);
        const nw = await vector(ops, 'blk.0.attn_norm.weight', normW);
        const [bq, bk, bv] = [
          await vector(ops, 'bq', biases.q),
          await vector(ops, 'bk', biases.k),
          await vector(ops, 'bv', biases.v),
        ];
        ops.createKvCache({ nSlots: 1, contextLength: 4, layers: uniformKvLayers(1, 1, 32) }); // completes pending groups
        const x = ops.createActivation('x', 1, k);
        const [q, kk, v] = [
          ops.createActivation('q', 1, nq),
          ops.createActivation('k', 1, nkv),
          ops.createActivation('v', 1, nkv),
        ];
        const hidden = ops.createActivation('hidden', 1, nff);
        const res = ops.createActivation('res', 1, nq);
        const res0 = randoms(nq, 11);
        await setRow(ops, x, xv);
        await setRow(ops, res, res0);

        const before = ops.stats.dispatches;
        ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
        const norm = { weight: nw, eps };
        expect(ops.matmulFused(q, x, wq, 1, { bias: bq, norm })).toBe(true);
        expect(ops.matmulFused(kk, x, wk, 1, { bias: bk, norm })).toBe(true);
        expect(ops.matmulFused(v, x, wv, 1, { bias: bv, norm })).toBe(true);
        expect(ops.matmulGlu(hidden, x, wgate, wup, 1, 'silu', norm)).toBe(true);
        expect(ops.matmulFused(res, x, wq, 1, { accumulate: true })).toBe(true);
        ops.endStep();
        const got = {
          q: await ops.read(q, 1),
          k: await ops.read(kk, 1),
          v: await ops.read(v, 1),
          hidden: await ops.read(hidden, 1),
          res: await ops.read(res, 1),
        };
        expect(ops.stats.dispatches - before).toBe(3); // Q|K|V, gate·up·GLU, accumulate

        const xn = normRef(xv, normW, eps);
        const want = {
          q: matvec(mats.q.values, xn, k, nq).map((y, r) => y + biases.q[r]!),
          k: matvec(mats.k.values, xn, k, nkv).map((y, r) => y + biases.k[r]!),
          v: matvec(mats.v.values, xn, k, nkv).map((y, r) => y + biases.v[r]!),
          hidden: (() => {
            const g = matvec(mats.gate.values, xn, k, nff);
            const u = matvec(mats.up.values, xn, k, nff);
            return g.map((gv, r) => (gv / (1 + Math.exp(-gv))) * u[r]!);
          })(),
          res: matvec(mats.q.values, xv, k, nq).map((y, r) => y + res0[r]!),
        };
        for (const key of ['q', 'k', 'v', 'hidden', 'res'] as const)
          expect(nmseOf(got[key], want[key]), key).toBeLessThan(1e-9);

        // A batch (gemm) reads the grouped members through their own buffer ranges.
        const x2 = ops.createActivation('x2', 2, k);
        const k2 = ops.createActivation('k2', 2, nkv);
        const xs = randoms(2 * k, 12);
        const table = await ops.uploadWeight(
          { name: 'rows2', type: GgmlType.F32, shape: [k, 2] },
          new Uint8Array(xs.buffer.slice(0)),
        );
        ops.beginStep({ tokens: Int32Array.of(0, 1), startPos: 0, slot: 0 });
        ops.embed(x2, table, 2);
        ops.matmul(k2, x2, wk, 2);
        ops.endStep();
        const gotK2 = await ops.read(k2, 2);
        const wantK2 = [
          ...matvec(mats.k.values, xs.subarray(0, k), k, nkv),
          ...matvec(mats.k.values, xs.subarray(k), k, nkv),
        ];
        expect(nmseOf(gotK2, wantK2)).toBeLessThan(path.preferF16 ? 1e-6 : 1e-9);
        expect(gpuErrors).toEqual([]);
      }, 360_000); // Q4_K's generic chunk compiles slowly on lavapipe (over 100 s at load average 20)
    }
  }
});
