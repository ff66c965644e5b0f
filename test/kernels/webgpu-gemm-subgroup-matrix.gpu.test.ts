/**
 * The subgroup-matrix prefill gemm (shaders/kernels/gemm_sm.wgsl, issue 23). Neither Dawn on lavapipe nor Chromium's
 * SwiftShader offers `chromium-experimental-subgroup-matrix` (lavapipe 25.0 has no VK_KHR_cooperative_matrix), so:
 * - the kernel runs here with the plain-WGSL stand-ins of shaders/matrix/emulated.wgsl (option
 *   `subgroupMatrix: { emulate }`): its tiling, staging, f16 rounding, overflow guard and edges against an f64
 *   product of the dequantized weights, for f32 and f16→f32 8×8×8 configs (the 16×16×16 NVIDIA-like shape runs in
 *   webgpu-model-subgroup-matrix.gpu.test.ts);
 * - the variant on the real builtins (shaders/matrix/subgroup.wgsl) is compiled: where the device lacks the feature
 *   the only message must be the extension's "not allowed" (Tint parses the whole module before that check, so a
 *   syntax error would show), and where a GPU has it the module must compile without errors.
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { composeShader } from '../../src/backend/webgpu/compose.js';
import { createWebGpuOps, type WebGpuOps } from '../../src/backend/webgpu/index.js';
import {
  SUBGROUP_MATRIX_FEATURE,
  type SubgroupMatrixConfig,
  subgroupMatrixTile,
} from '../../src/backend/webgpu/subgroup-matrix.js';
import { getGpuQuantLayout } from '../../src/backend/webgpu/upload.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import {
  collectGpuErrors,
  destroyTestGpu,
  getTestDevice,
  getTestGpu,
  makeWeight,
  nmseOf as nmse,
  randoms,
} from '../helpers/gpu.js';

const F32_8: SubgroupMatrixConfig = { componentType: 'f32', resultComponentType: 'f32', M: 8, N: 8, K: 8 };
const F16_16: SubgroupMatrixConfig = { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 };
const F16_8: SubgroupMatrixConfig = { componentType: 'f16', resultComponentType: 'f32', M: 8, N: 8, K: 8 };

const created: WebGpuOps[] = [];
const gpuErrors = collectGpuErrors();
afterAll(() => {
  for (const o of created) o.destroy();
  destroyTestGpu();
});

/** out[t, r] = Σ_k w[r, k]·x[t, k] in f64. */
function matmulRef(w: Float32Array, x: Float32Array, k: number, nRows: number, n: number): Float64Array {
  const out = new Float64Array(n * nRows);
  for (let t = 0; t < n; t++) {
    for (let r = 0; r < nRows; r++) {
      let s = 0;
      for (let j = 0; j < k; j++) s += w[r * k + j]! * x[t * k + j]!;
      out[t * nRows + r] = s;
    }
  }
  return out;
}

async function setRows(ops: Ops, act: ReturnType<Ops['createActivation']>, values: Float32Array, n: number) {
  const table = await ops.uploadWeight(
    { name: `rows${values.length}`, type: GgmlType.F32, shape: [act.cols, n] },
    new Uint8Array(values.buffer.slice(0)),
  );
  ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(act, table, n);
  ops.endStep();
}

/** x·Wᵀ of a random `type` weight [k × nRows] for n tokens: NMSE vs f64 and the kernels the step ran. */
async function product(
  ops: WebGpuOps,
  type: GgmlType,
  k: number,
  nRows: number,
  n: number,
  xScale = 1.7,
): Promise<{ err: number; kernels: string[] }> {
  const { bytes, values } = makeWeight(type, k, nRows, 11 + k + nRows + type);
  const w = await ops.uploadWeight({ name: `w${type}.${k}x${nRows}`, type, shape: [k, nRows] }, bytes);
  const xv = randoms(n * k, 5 + n, xScale);
  const x = ops.createActivation('x', n, k);
  const out = ops.createActivation('out', n, nRows);
  await setRows(ops, x, xv, n);
  ops.beginProfile();
  ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
  ops.matmul(out, x, w, n);
  ops.endStep();
  const res = await ops.read(out, n);
  const profile = ops.endProfile(1, n);
  return { err: nmse(res, matmulRef(values, xv, k, nRows, n)), kernels: Object.keys(profile.kernels) };
}

describe('gemm_sm on emulated subgroup matrices (lavapipe)', () => {
  it('f32 components, 8×8×8: every weight family, odd shapes, partial tiles', async () => {
    const ops = await createWebGpuOps({
      gpu: await getTestGpu(),
      isSoftware: false,
      subgroupMatrix: { emulate: [F16_16, F32_8] },
    });
    created.push(ops);
    // Each type is one pipeline, slow to compile on lavapipe: a float row of odd length, a row-split quant, a K-quant.
    const cases: [GgmlType, number, number][] = [
      [GgmlType.F32, 45, 37],
      [GgmlType.Q4_0, 96, 70],
      [GgmlType.Q4_K, 256, 33],
    ];
    for (const [type, k, nRows] of cases) {
      for (const n of [2, 70]) {
        const { err, kernels } = await product(ops, type, k, nRows, n);
        const label = `${getQuantType(type).name} [${k}×${nRows}] n=${n}`;
        expect(
          kernels.some((l) => l.startsWith('gemm_sm.emu8x8x8f')),
          `${label}: ${kernels.join(', ')}`,
        ).toBe(true);
        expect(err, label).toBeLessThan(1e-9);
      }
    }
    expect(gpuErrors).toEqual([]);
  }, 600_000);

  // 8×8×8 here: lavapipe takes minutes to compile the 16×16×16 variant (webgpu-model-subgroup-matrix runs it once).
  it('f16 components, 8×8×8: integer quants only, within f16 tolerance, activations past 65504 scaled', async () => {
    const ops = await createWebGpuOps({
      gpu: await getTestGpu(),
      preferF16: true,
      isSoftware: false,
      subgroupMatrix: { emulate: [F16_8] },
    });
    created.push(ops);
    for (const [type, k, nRows] of [
      [GgmlType.Q4_0, 96, 37],
      [GgmlType.Q8_0, 160, 70],
    ] as const) {
      for (const n of [70]) {
        const label = `${getQuantType(type).name} [${k}×${nRows}] n=${n}`;
        const plain = await product(ops, type, k, nRows, n);
        expect(
          plain.kernels.some((l) => l.startsWith('gemm_sm.emu8x8x8h')),
          label,
        ).toBe(true);
        expect(plain.err, label).toBeLessThan(3e-6);
        // Activations ~1e5 (≈ 2^17): f16 would overflow to ∞ without the per-token power-of-two scale.
        const big = await product(ops, type, k, nRows, n, 1e5);
        expect(big.err, `${label}, |x| ~ 1e5`).toBeLessThan(3e-6);
      }
    }
    // K-quants round past tolerance in f16: no f32 config offered, so they keep the plain gemm.
    const kq = await product(ops, GgmlType.Q4_K, 256, 9, 5);
    expect(
      kq.kernels.some((l) => l.startsWith('gemm.')),
      kq.kernels.join(', '),
    ).toBe(true);
    expect(kq.err).toBeLessThan(3e-6);
    expect(gpuErrors).toEqual([]);
  }, 600_000);
});

describe('gemm_sm on the subgroup-matrix builtins', () => {
  it('the WGSL parses: only the missing feature is reported (or nothing, where a GPU offers it)', async () => {
    const device = await getTestDevice(['shader-f16', 'subgroups', SUBGROUP_MATRIX_FEATURE as GPUFeatureName]);
    const has = device.features.has(SUBGROUP_MATRIX_FEATURE);
    const layout = getGpuQuantLayout(GgmlType.Q4_0, 'w', 'hardware');
    for (const config of [F32_8, F16_16]) {
      const tile = subgroupMatrixTile({ configs: [config], lanes: 32, emulated: false }, layout.name, true, {
        maxComputeWorkgroupStorageSize: 32768,
        maxComputeInvocationsPerWorkgroup: 256,
      });
      expect(tile).not.toBeNull();
      const code = composeShader({
        kernel: 'gemm_sm',
        quantWgsl: layout.wgsl,
        dtype: 'f16',
        subgroups: true,
        extra: tile!.extra,
      });
      const info = await device.createShaderModule({ code }).getCompilationInfo();
      const errors = info.messages.filter((m) => m.type === 'error').map((m) => m.message);
      if (has) expect(errors, tile!.tag).toEqual([]);
      else {
        expect(errors.length, `${tile!.tag}: ${errors.join('\n')}`).toBe(1);
        expect(errors[0]).toMatch(/chromium_experimental_subgroup_matrix' is not allowed/);
      }
    }
    console.log(`[gpu] ${SUBGROUP_MATRIX_FEATURE}: ${has ? 'offered, modules compiled' : 'not offered, parsed only'}`);
  });
});
