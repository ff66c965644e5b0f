/**
 * The f16 path of the recurrent prefill kernels on WebGPU: delta_net `rule_heads` stages each tile's k and q, mamba2
 * `scan_heads` each tile's B and C, as F in workgroup memory (f16 with shader-f16, like attention_prefill's K/V
 * tiles); state and sums stay f32. One prefill step of random inputs through `Ops.deltaNet` / `Ops.mamba2` on both
 * capability paths against the CPU reference: the f32 path equals it to f32 rounding, the f16 path to the rounding of
 * the staged values — and differs from the f32 path, subgroups off on both (the tiles really are f16 there).
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { DeltaNetDims } from '../../src/backend/delta-net-types.js';
import { deltaNetStateSize } from '../../src/backend/delta-net.js';
import { type Mamba2Dims, mamba2StateSize, mamba2Widths } from '../../src/backend/mamba2.js';
import type { Activation, Ops, Weight } from '../../src/backend/ops.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { maxAbsDiff } from '../../src/model/conformance.js';
import { destroyTestGpu, getTestDevice } from '../helpers/gpu.js';
import { mulberry32 } from '../helpers/mulberry32.js';

const N = 20; // tokens of the step: two full tiles of 8 and a partial one
const DN: DeltaNetDims = { convWidth: 4, headK: 32, nKHeads: 2, headV: 16, nVHeads: 4 };
const M2: Mamba2Dims = { convWidth: 4, dState: 32, nGroups: 2, nHeads: 4, headDim: 16 };

function random(seed: number, count: number, scale: number, offset = 0): Float32Array {
  const next = mulberry32(seed);
  return Float32Array.from({ length: count }, () => offset + scale * (2 * next() - 1));
}

async function vector(ops: Ops, name: string, values: Float32Array, shape: number[]): Promise<Weight> {
  return ops.uploadWeight({ name, type: GgmlType.F32, shape }, new Uint8Array(values.buffer.slice(0)));
}

async function input(ops: Ops, label: string, cols: number, seed: number, scale: number): Promise<Activation> {
  const a = ops.createActivation(label, N, cols);
  ops.setRows(a, random(seed, N * cols, scale), N);
  return a;
}

/** out [N, nVHeads·headV] of one DeltaNet prefill step from a fresh state. */
async function deltaNetStep(ops: Ops): Promise<Float32Array> {
  const d = DN;
  const channels = 2 * d.nKHeads * d.headK + d.nVHeads * d.headV;
  const vCols = d.nVHeads * d.headV;
  const w = {
    dims: d,
    conv: await vector(ops, 'conv', random(1, channels * d.convWidth, 0.5), [d.convWidth, channels]),
    dtBias: await vector(ops, 'dt_bias', random(2, d.nVHeads, 0.5), [d.nVHeads]),
    a: await vector(ops, 'a', random(3, d.nVHeads, 0.5, -1), [d.nVHeads]),
    norm: await vector(ops, 'norm', random(4, d.headV, 0.2, 1), [d.headV]),
  };
  ops.createRecurrentState({ nSlots: 1, layerSizes: [deltaNetStateSize(d)] });
  ops.beginStep({ tokens: new Int32Array(N), startPos: 0, slot: 0 });
  const inputs = {
    mixed: await input(ops, 'mixed', channels, 5, 2),
    z: await input(ops, 'z', vCols, 6, 1),
    beta: await input(ops, 'beta', d.nVHeads, 7, 2),
    alpha: await input(ops, 'alpha', d.nVHeads, 8, 2),
    conv: ops.createActivation('conv', N, channels),
  };
  const out = ops.createActivation('out', N, vCols);
  ops.deltaNet(out, inputs, 0, N, w, 1e-6);
  ops.endStep();
  return ops.read(out, N);
}

/** out [N, inner] of one Mamba-2 prefill step from a fresh state. */
async function mamba2Step(ops: Ops): Promise<Float32Array> {
  const d = M2;
  const { inner, conv, proj } = mamba2Widths(d);
  const w = {
    dims: d,
    conv: await vector(ops, 'conv', random(11, conv * d.convWidth, 0.5), [d.convWidth, conv]),
    convBias: await vector(ops, 'conv_bias', random(12, conv, 0.1), [conv]),
    dtBias: await vector(ops, 'dt_bias', random(13, d.nHeads, 0.5), [d.nHeads]),
    a: await vector(ops, 'a', random(14, d.nHeads, 0.5, -1), [d.nHeads]),
    d: await vector(ops, 'd', random(15, d.nHeads, 1), [d.nHeads]),
    norm: await vector(ops, 'norm', random(16, inner, 0.2, 1), [inner]),
  };
  ops.createRecurrentState({ nSlots: 1, layerSizes: [mamba2StateSize(d)] });
  ops.beginStep({ tokens: new Int32Array(N), startPos: 0, slot: 0 });
  const inputs = { zxbcdt: await input(ops, 'zxbcdt', proj, 17, 2), conv: ops.createActivation('conv', N, conv) };
  const out = ops.createActivation('out', N, inner);
  ops.mamba2(out, inputs, 0, N, w, 1e-5);
  ops.endStep();
  return ops.read(out, N);
}

describe('recurrent prefill tiles on WebGPU: f16 path', () => {
  afterAll(() => destroyTestGpu());
  const cases = [
    ['delta_net rule_heads (k, q tiles)', deltaNetStep],
    ['mamba2 scan_heads (B, C tiles)', mamba2Step],
  ] as const;
  for (const [name, step] of cases) {
    it(`${name}: f32 path = CPU; f16 path = CPU to f16 rounding of the tiles, and not the f32 path`, async () => {
      const device = await getTestDevice(['shader-f16', 'subgroups']);
      const cpu = await step(createCpuOps());
      const f32 = await step(await createWebGpuOps({ device, preferF16: false, useSubgroups: false }));
      const f16 = await step(await createWebGpuOps({ device, preferF16: true, useSubgroups: false })); // dtype alone differs
      const scale = cpu.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      expect(scale).toBeGreaterThan(0.1);
      expect(maxAbsDiff(f32, cpu)).toBeLessThanOrEqual(1e-4 * scale);
      expect(maxAbsDiff(f16, cpu)).toBeLessThanOrEqual(1e-2 * scale);
      expect(maxAbsDiff(f16, f32)).toBeGreaterThan(0);
    });
  }
});
