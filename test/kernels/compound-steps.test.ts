/**
 * The compound steps' contracts the dense architectures of issue 14 rely on, on the reference and WASM backends
 * against an f64 reference: `normMatmul` and `gatedFfn` without a norm (olmo2 and exaone4 blocks read the raw
 * residual stream) and `matmulResidual` with a post-norm and a residual multiplier (granite). WebGPU runs the same
 * steps in the model conformance suite (olmo2 and granite fixtures).
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Activation, Ops, Weight } from '../../src/backend/ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { mulberry32 } from '../helpers/mulberry32.js';

const K = 64; // input width
const ROWS = 40; // output width
const N = 3; // tokens

function randomF32(n: number, seed: number): Float32Array {
  const next = mulberry32(seed);
  return Float32Array.from({ length: n }, () => next() * 2 - 1);
}

const bytesOf = (a: Float32Array): Uint8Array =>
  new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));

async function upload(ops: Ops, name: string, values: Float32Array, shape: number[]): Promise<Weight> {
  return ops.uploadWeight({ name, type: GgmlType.F32, shape }, bytesOf(values));
}

/** An activation [rows, cols] holding `values` (set through an F32 embedding table). */
async function activation(ops: Ops, label: string, values: Float32Array, rows: number, cols: number) {
  const table = await upload(ops, `${label}-values`, values, [cols, rows]);
  const a = ops.createActivation(label, rows, cols);
  ops.beginStep({ tokens: Int32Array.from({ length: rows }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(a, table, rows);
  ops.endStep();
  return a;
}

/** out[t, r] = Σ_j w[r, j]·x[t, j] (+ b[r]) in f64; x [N, K], w [ROWS, K]. */
function matmulRef(x: Float32Array, w: Float32Array, b?: Float32Array): Float64Array {
  const out = new Float64Array(N * ROWS); // [N, ROWS]
  for (let t = 0; t < N; t++) {
    for (let r = 0; r < ROWS; r++) {
      let s = b ? b[r]! : 0;
      for (let j = 0; j < K; j++) s += w[r * K + j]! * x[t * K + j]!;
      out[t * ROWS + r] = s;
    }
  }
  return out;
}

function expectClose(got: Float32Array, want: ArrayLike<number>, what: string): void {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i]! - want[i]!) <= 1e-4 * Math.max(1, Math.abs(want[i]!)))) {
      expect.fail(`${what}[${i}]: ${got[i]} vs reference ${want[i]}`);
    }
  }
}

async function step(ops: Ops, body: () => void, out: Activation): Promise<Float32Array> {
  ops.beginStep({ tokens: new Int32Array(N), startPos: 0, slot: 0 });
  body();
  ops.endStep();
  return ops.read(out, N);
}

const BACKENDS: readonly [string, () => Promise<Ops>][] = [
  ['cpu', async () => createCpuOps()],
  ['wasm', () => createWasmOps()],
];

describe.each(BACKENDS)('compound steps without a norm, with a residual multiplier (%s)', (_name, make) => {
  const xv = randomF32(N * K, 1); // [N, K]
  const wv = randomF32(ROWS * K, 2); // [ROWS, K]
  const uv = randomF32(ROWS * K, 3); // [ROWS, K]

  it('normMatmul with a null norm projects x itself', async () => {
    const ops = await make();
    const x = await activation(ops, 'x', xv, N, K);
    const normed = ops.createActivation('normed', N, K);
    const out = ops.createActivation('out', N, ROWS);
    const w = await upload(ops, 'w', wv, [K, ROWS]);
    const got = await step(ops, () => ops.normMatmul(normed, x, null, [{ out, weight: w, bias: null }], N), out);
    expectClose(got, matmulRef(xv, wv), 'normMatmul');
    ops.destroy();
  });

  it('gatedFfn with a null norm gates x itself', async () => {
    const ops = await make();
    const x = await activation(ops, 'x', xv, N, K);
    const scratch = {
      normed: ops.createActivation('normed', N, K),
      gate: ops.createActivation('gate', N, ROWS),
      up: ops.createActivation('up', N, ROWS),
    };
    const out = ops.createActivation('hidden', N, ROWS);
    const gate = await upload(ops, 'gate', wv, [K, ROWS]);
    const up = await upload(ops, 'up', uv, [K, ROWS]);
    const got = await step(ops, () => ops.gatedFfn(out, x, null, gate, up, N, 'silu', scratch), out);
    const g = matmulRef(xv, wv);
    const u = matmulRef(xv, uv);
    expectClose(
      got,
      g.map((v, i) => (v / (1 + Math.exp(-v))) * u[i]!),
      'gatedFfn',
    );
    ops.destroy();
  });

  it('matmulResidual adds scale · postNorm(input · wᵀ + bias)', async () => {
    const ops = await make();
    const input = await activation(ops, 'input', xv, N, K);
    const resv = randomF32(N * ROWS, 4); // [N, ROWS]
    const res = await activation(ops, 'res', resv, N, ROWS);
    const bv = randomF32(ROWS, 5);
    const nv = randomF32(ROWS, 6);
    const w = await upload(ops, 'w', wv, [K, ROWS]);
    const bias = await upload(ops, 'b', bv, [ROWS]);
    const norm = await upload(ops, 'n', nv, [ROWS]);
    const scratch = ops.createActivation('scratch', N, ROWS);
    const scale = 0.22;
    const eps = 1e-5;
    const got = await step(
      ops,
      () => ops.matmulResidual(res, input, w, N, { bias, postNorm: { weight: norm, eps }, scale, scratch }),
      res,
    );
    const p = matmulRef(xv, wv, bv);
    const want = new Float64Array(N * ROWS); // [N, ROWS]
    for (let t = 0; t < N; t++) {
      let ss = 0;
      for (let r = 0; r < ROWS; r++) ss += p[t * ROWS + r]! ** 2;
      const f = 1 / Math.sqrt(ss / ROWS + eps);
      for (let r = 0; r < ROWS; r++) {
        want[t * ROWS + r] = resv[t * ROWS + r]! + scale * p[t * ROWS + r]! * f * nv[r]!;
      }
    }
    expectClose(got, want, 'matmulResidual');
    ops.destroy();
  });
});
