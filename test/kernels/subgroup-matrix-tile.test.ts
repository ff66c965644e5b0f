/**
 * Which subgroup-matrix config the prefill gemm takes (src/backend/webgpu/subgroup-matrix.ts, issue 23), without a
 * GPU: only with the feature (or emulation), only f32 results, f32 components first, f16 components only for the
 * small-block integer quants on shader-f16 devices, K dividing the 32-k step, within the workgroup limits.
 */

import { describe, expect, it } from 'vitest';
import {
  SUBGROUP_MATRIX_FEATURE,
  type SubgroupMatrixConfig,
  subgroupMatrixSupport,
  subgroupMatrixTile,
} from '../../src/backend/webgpu/subgroup-matrix.js';

const cfg = (componentType: string, resultComponentType: string, M: number, N = M, K = M): SubgroupMatrixConfig => ({
  componentType,
  resultComponentType,
  M,
  N,
  K,
});
const LIMITS = { maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 };
const support = (configs: SubgroupMatrixConfig[], lanes = 32) => ({ configs, lanes, emulated: false });
const fakeDevice = (features: string[]) => ({ features: new Set(features) }) as unknown as GPUDevice;

describe('subgroup-matrix config choice', () => {
  it('needs the feature and subgroups, or emulation; reads the configs and lanes from the adapter info', () => {
    const info = { subgroupMatrixConfigs: [cfg('f16', 'f32', 16)], subgroupMaxSize: 64 } as unknown as GPUAdapterInfo;
    expect(subgroupMatrixSupport(undefined, fakeDevice([]), info, true)).toBeNull();
    expect(subgroupMatrixSupport('auto', fakeDevice([SUBGROUP_MATRIX_FEATURE]), info, false)).toBeNull();
    expect(subgroupMatrixSupport('off', fakeDevice([SUBGROUP_MATRIX_FEATURE]), info, true)).toBeNull();
    expect(subgroupMatrixSupport('auto', fakeDevice([SUBGROUP_MATRIX_FEATURE]), info, true)).toEqual({
      configs: [cfg('f16', 'f32', 16)],
      lanes: 64,
      emulated: false,
    });
    expect(subgroupMatrixSupport({ emulate: [cfg('f32', 'f32', 8)] }, fakeDevice([]), undefined, false)).toEqual({
      configs: [cfg('f32', 'f32', 8)],
      lanes: 32,
      emulated: true,
    });
  });

  it('f32 results only; f32 components first, then f16 for Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 with shader-f16', () => {
    const both = support([cfg('f16', 'f16', 16), cfg('f16', 'f32', 16), cfg('f32', 'f32', 8)]);
    expect(subgroupMatrixTile(both, 'q4_k', true, LIMITS)).toMatchObject({ component: 'f32', m: 8, rows: 32 });
    const f16Only = support([cfg('f16', 'f16', 16), cfg('f16', 'f32', 16)]);
    expect(subgroupMatrixTile(f16Only, 'q4_0_rows', true, LIMITS)).toMatchObject({
      component: 'f16',
      m: 16,
      rows: 64,
      tokens: 64,
      wgSize: 128,
      tag: 'sm16x16x16h.l32',
    });
    expect(subgroupMatrixTile(f16Only, 'q8_0', true, LIMITS)?.component).toBe('f16');
    expect(subgroupMatrixTile(f16Only, 'q4_0_rows', false, LIMITS)).toBeNull();
    expect(subgroupMatrixTile(f16Only, 'q4_k', true, LIMITS)).toBeNull();
    expect(subgroupMatrixTile(f16Only, 'f16', true, LIMITS)).toBeNull();
    expect(subgroupMatrixTile(support([cfg('f16', 'f16', 16)]), 'q4_0', true, LIMITS)).toBeNull();
  });

  it('the real variant enables the extension and turns its uniformity diagnostic off; the f16 one guards overflow', () => {
    const t = subgroupMatrixTile(support([cfg('f16', 'f32', 16)]), 'q8_0', true, LIMITS)!;
    expect(t.extra.directives).toEqual([
      'enable chromium_experimental_subgroup_matrix;',
      'diagnostic(off, chromium.subgroup_matrix_uniformity);',
    ]);
    expect(t.extra.wgsl).toContain('const GUARD: bool = true;');
    expect(t.extra.wgsl).toContain('subgroupMatrixMultiplyAccumulate');
    const e = subgroupMatrixTile({ ...support([cfg('f32', 'f32', 8)]), emulated: true }, 'q8_0', true, LIMITS)!;
    expect(e.extra.directives).toEqual([]);
    expect(e.extra.wgsl).toContain('const GUARD: bool = false;');
    expect(e.extra.wgsl).not.toContain('subgroupMatrixMultiplyAccumulate');
  });

  it('K must divide the 32-k step; workgroups within the invocation and storage limits', () => {
    expect(subgroupMatrixTile(support([cfg('f32', 'f32', 8, 8, 24)]), 'q4_0', true, LIMITS)).toBeNull();
    expect(subgroupMatrixTile(support([cfg('f32', 'f32', 8)], 128), 'q4_0', true, LIMITS)).toBeNull();
    const small = { ...LIMITS, maxComputeWorkgroupStorageSize: 16384 };
    expect(subgroupMatrixTile(support([cfg('f32', 'f32', 16)]), 'q4_0', true, small)).toBeNull();
    expect(subgroupMatrixTile(support([cfg('f32', 'f32', 16), cfg('f32', 'f32', 8)]), 'q4_0', true, small)?.m).toBe(8);
  });
});
