/**
 * gemma3n's AltUp primitives (`Ops.altUp`: addScaledRows, matchMagnitude, gaussianTopK, mulVector) on the reference and
 * WASM backends against an f64 reference, including the gaussian top-k cutoff's n − 1 denominator. WebGPU runs the
 * same ops in the model conformance suite (the gemma3n fixtures).
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Activation, Ops } from '../../src/backend/ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { mulberry32 } from '../helpers/mulberry32.js';

const C = 48; // columns
const N = 3; // rows

function randomF32(n: number, seed: number): Float32Array {
  const next = mulberry32(seed);
  return Float32Array.from({ length: n }, () => next() * 4 - 2);
}

const bytesOf = (a: Float32Array): Uint8Array =>
  new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));

/** An activation [rows, cols] holding `values` (set through an F32 embedding table). */
async function activation(ops: Ops, label: string, values: Float32Array, rows: number, cols: number) {
  const table = await ops.uploadWeight(
    { name: `${label}-values`, type: GgmlType.F32, shape: [cols, rows] },
    bytesOf(values),
  );
  const a = ops.createActivation(label, rows, cols);
  ops.beginStep({ tokens: Int32Array.from({ length: rows }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(a, table, rows);
  ops.endStep();
  return a;
}

function expectClose(got: Float32Array, want: ArrayLike<number>, what: string): void {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i]! - want[i]!) <= 1e-5 * Math.max(1, Math.abs(want[i]!)))) {
      expect.fail(`${what}[${i}]: ${got[i]} vs reference ${want[i]}`);
    }
  }
}

const norm = (v: Float32Array, t: number): number => {
  let s = 0;
  for (let i = 0; i < C; i++) s += v[t * C + i]! ** 2;
  return Math.sqrt(s);
};

async function run(ops: Ops, f: (a: { x: Activation; y: Activation; coef: Activation }) => void) {
  const a = {
    x: await activation(ops, 'x', randomF32(N * C, 1), N, C),
    y: await activation(ops, 'y', randomF32(N * C, 2), N, C),
    coef: await activation(ops, 'coef', randomF32(N * 5, 3), N, 5),
  };
  ops.beginStep({ tokens: new Int32Array(N), startPos: 0, slot: 0 });
  f(a);
  ops.endStep();
  return ops.read(a.x, N);
}

for (const [name, make] of [
  ['cpu', () => createCpuOps()],
  ['wasm', () => createWasmOps()],
] as const) {
  describe(`AltUp primitives: ${name}`, () => {
    const x = randomF32(N * C, 1);
    const y = randomF32(N * C, 2);
    const coef = randomF32(N * 5, 3);

    it('addScaledRows: x[t] += (coef[t, col] + bias) · y[t]', async () => {
      const ops = await make();
      const got = await run(ops, (a) => ops.altUp.addScaledRows(a.x, a.y, a.coef, 3, 1, N));
      expectClose(
        got,
        Array.from(x, (v, i) => v + (coef[Math.floor(i / C) * 5 + 3]! + 1) * y[i]!),
        'addScaledRows',
      );
      ops.destroy();
    });

    it('matchMagnitude: x[t] · ‖y[t]‖ / ‖x[t]‖', async () => {
      const ops = await make();
      const got = await run(ops, (a) => ops.altUp.matchMagnitude(a.x, a.y, N));
      const t = (i: number) => Math.floor(i / C);
      expectClose(
        got,
        Array.from(x, (v, i) => (v * norm(y, t(i))) / norm(x, t(i))),
        'matchMagnitude',
      );
      ops.destroy();
    });

    it('gaussianTopK: max(0, x − (mean + z · std)), std over C − 1', async () => {
      const ops = await make();
      const z = 0.7;
      const got = await run(ops, (a) => ops.altUp.gaussianTopK(a.x, z, N));
      const want = Array.from(x, (v, i) => {
        const row = x.subarray(Math.floor(i / C) * C, Math.floor(i / C) * C + C);
        const mean = row.reduce((s, u) => s + u, 0) / C;
        const sd = Math.sqrt(row.reduce((s, u) => s + (u - mean) ** 2, 0) / (C - 1));
        return Math.max(0, v - (mean + z * sd));
      });
      expectClose(got, want, 'gaussianTopK');
      expect(got.filter((v) => v > 0).length).toBeGreaterThan(0);
      ops.destroy();
    });

    it('mulVector: x[t, i] · w[i]', async () => {
      const ops = await make();
      const w = randomF32(C, 4);
      const wt = await ops.uploadWeight({ name: 'w', type: GgmlType.F32, shape: [C] }, bytesOf(w));
      const got = await run(ops, (a) => ops.altUp.mulVector(a.x, wt, N));
      expectClose(
        got,
        Array.from(x, (v, i) => v * w[i % C]!),
        'mulVector',
      );
      ops.destroy();
    });
  });
}
