/**
 * The encoder ops on WebGPU (both capability paths) vs the plain-TS reference: LayerNorm with and without weight and
 * bias, in place and out of place, over rows wider than a workgroup; and GELU as llama.cpp's CPU backend tabulates it
 * (x and the result rounded to f16; 0 below −10, x above 10), which must agree to the f16 value on every input.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Activation, Ops } from '../../src/backend/ops.js';
import { createWebGpuOps, type WebGpuOps } from '../../src/backend/webgpu/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { collectGpuErrors, destroyTestGpu, getTestGpu, GPU_VARIANTS, randoms, relMaxAbs } from '../helpers/gpu.js';

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

async function vector(ops: Ops, name: string, values: Float32Array) {
  return ops.uploadWeight({ name, type: GgmlType.F32, shape: [values.length] }, new Uint8Array(values.buffer.slice(0)));
}

/** LayerNorms of 3 rows of 300 (> one workgroup), with a large mean so centring matters. */
async function layerNorms(ops: Ops): Promise<Float32Array[]> {
  const cols = 300;
  const x = ops.createActivation('x', 3, cols);
  const y = ops.createActivation('y', 3, cols);
  const xv = randoms(3 * cols, 5).map((v) => v + 4);
  await setRows(ops, x, xv, 3);
  const w = await vector(ops, 'ln.w', randoms(cols, 6));
  const b = await vector(ops, 'ln.b', randoms(cols, 7));
  ops.beginStep({ tokens: new Int32Array(3), startPos: 0, slot: 0 });
  ops.layerNorm(y, x, w, b, 1e-12, 3);
  ops.endStep();
  const withBias = await ops.read(y, 3);
  ops.beginStep({ tokens: new Int32Array(3), startPos: 0, slot: 0 });
  ops.layerNorm(y, x, w, null, 1e-5, 2);
  ops.layerNorm(x, x, null, null, 1e-5, 3); // in place, no weight or bias
  ops.endStep();
  return [withBias, await ops.read(y, 2), await ops.read(x, 3)];
}

/** GELU over a sweep of −12 … 12 and random values, in place. */
async function gelus(ops: Ops): Promise<Float32Array[]> {
  const cols = 512;
  const x = ops.createActivation('g', 2, cols);
  const sweep = Float32Array.from({ length: cols }, (_, i) => -12 + (24 * i) / (cols - 1));
  const values = new Float32Array(2 * cols);
  values.set(sweep);
  values.set(randoms(cols, 9), cols);
  await setRows(ops, x, values, 2);
  ops.beginStep({ tokens: new Int32Array(2), startPos: 0, slot: 0 });
  ops.gelu(x, 2);
  ops.endStep();
  return [await ops.read(x, 2)];
}

async function both(gpu: () => Promise<Ops>, scenario: (ops: Ops) => Promise<Float32Array[]>) {
  const cpu = createCpuOps();
  const want = await scenario(cpu);
  cpu.destroy();
  return [await scenario(await gpu()), want] as const;
}

for (const variant of GPU_VARIANTS) {
  describe(`webgpu encoder ops vs reference (${variant.name})`, () => {
    let gpuOps: WebGpuOps | null = null;
    const gpu = async (): Promise<Ops> => {
      gpuOps ??= await createWebGpuOps({
        gpu: await getTestGpu(),
        preferF16: variant.preferF16,
        useSubgroups: variant.useSubgroups,
      });
      if (!created.includes(gpuOps)) created.push(gpuOps);
      return gpuOps;
    };

    it('layerNorm: weight and bias, weight only, in place without either', async () => {
      const [got, want] = await both(gpu, layerNorms);
      got.forEach((g, i) => expect(relMaxAbs(g, want[i]!), `case ${i}`).toBeLessThan(1e-5));
    });

    it("gelu: llama.cpp CPU's f16-tabulated values, clamped beyond ±10", async () => {
      const [[got], [want]] = await both(gpu, gelus);
      let exact = 0;
      for (let i = 0; i < want!.length; i++) {
        // f32 tanh differs in its last bits between TS and WGSL: a value next to a rounding boundary may land one
        // f16 step away; the rest must be the very same f16 value (unrounded results would almost never be).
        const ulp = Math.max(2 ** -24, 2 ** (Math.floor(Math.log2(Math.abs(want![i]!) || 1)) - 10));
        expect(Math.abs(got![i]! - want![i]!), `x #${i}`).toBeLessThanOrEqual(Math.max(ulp, 1e-6));
        if (got![i] === want![i]) exact++;
      }
      expect(exact / want!.length).toBeGreaterThan(0.95);
      expect(got![0]).toBe(0); // x = −12
      expect(got![511]).toBe(12); // x = 12
    });
  });
}

it('raised no uncaptured WebGPU errors', () => {
  expect(gpuErrors).toEqual([]);
});
