/**
 * The software kernel set's WGSL (gemv_bcast and the `dot32` block products) is a feature shader
 * (src/backend/webgpu/feature-shaders.ts), not part of the main download: in a fresh module graph (as a page has)
 * it is absent until `createWebGpuOps` picks the software set, which awaits it — then a Q4_0 matmul through
 * gemv_bcast matches the f64 reference. A hardware-set device does not fetch it.
 */

import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { GgmlType } from '../../src/gguf/types.js';
import { destroyTestGpu, getTestGpu, makeWeight, nmseOf, randoms } from '../helpers/gpu.js';

type WebGpuIndex = typeof import('../../src/backend/webgpu/index.js');
type Compose = typeof import('../../src/backend/webgpu/compose.js');

/** The WebGPU backend and its shader registry in a fresh module graph: no feature shader loaded yet. */
async function freshBackend(): Promise<{ index: WebGpuIndex; compose: Compose }> {
  vi.resetModules();
  const [index, compose] = await Promise.all([
    import('../../src/backend/webgpu/index.js'),
    import('../../src/backend/webgpu/compose.js'),
  ]);
  return { index, compose };
}

/** Writes `values` ([n, cols]) into a fresh activation through an F32 embedding table. */
async function activation(ops: Ops, name: string, values: Float32Array, n: number) {
  const cols = values.length / n;
  const act = ops.createActivation(name, n, cols);
  const table = await ops.uploadWeight(
    { name: `${name}.rows`, type: GgmlType.F32, shape: [cols, n] },
    new Uint8Array(values.buffer.slice(0)),
  );
  ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(act, table, n);
  ops.endStep();
  return act;
}

const destroy: (() => void)[] = [];
afterAll(() => {
  for (const d of destroy) d();
  destroyTestGpu();
});

describe('software kernel set WGSL, loaded on demand', () => {
  it('is absent from a fresh graph and fetched by createWebGpuOps for the software set', async () => {
    const { index, compose } = await freshBackend();
    expect(compose.kernelSource('gemv_bcast')).toBeUndefined();
    expect(compose.kernelNames()).not.toContain('gemv_bcast');
    const ops = await index.createWebGpuOps({ gpu: await getTestGpu(), kernels: 'software', useSubgroups: true });
    destroy.push(() => ops.destroy());
    expect(ops.kernelSet).toBe('software');
    expect(compose.kernelSource('gemv_bcast')).toBeDefined();
    // A Q4_0 matvec (gemv_bcast with the type's fast dot32) against the f64 reference.
    const [k, nRows, n] = [64, 37, 1];
    const gate = makeWeight(GgmlType.Q4_0, k, nRows, 5);
    const wg = await ops.uploadWeight({ name: 'gate', type: GgmlType.Q4_0, shape: [k, nRows] }, gate.bytes);
    const xv = randoms(n * k, 9);
    const x = await activation(ops, 'x', xv, n);
    const dot = (w: Float32Array, r: number): number => xv.reduce((s, v, j) => s + v * w[r * k + j]!, 0);
    const out = ops.createActivation('out', n, nRows);
    ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
    ops.matmul(out, x, wg, n);
    ops.endStep();
    const plain = Array.from({ length: nRows }, (_, r) => dot(gate.values, r));
    expect(nmseOf(await ops.read(out, n), plain)).toBeLessThan(1e-9);
  });

  it('is not fetched for the hardware set', async () => {
    const { index, compose } = await freshBackend();
    const ops = await index.createWebGpuOps({ gpu: await getTestGpu(), kernels: 'hardware', subgroupMatrix: 'off' });
    destroy.push(() => ops.destroy());
    expect(ops.kernelSet).toBe('hardware');
    expect(compose.kernelSource('gemv_bcast')).toBeUndefined();
  });
});
