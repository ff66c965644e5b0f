/**
 * The prefill gemm on subgroup matrices (`chromium-experimental-subgroup-matrix`, cooperative matrices): which of the
 * adapter's reported matrix shapes the kernel uses for a weight type, and the pipeline variant (shaders/kernels/
 * gemm_sm.wgsl with its generated prelude and matrix snippet). Results accumulate in f32 whatever the component type:
 * only configs whose result component is f32 are taken. f32 components are preferred (exact staging, every weight
 * type); f16 components only for the small-block integer quants, whose staged weights f16 rounds within the tests'
 * tolerance, with gemm_sm's per-token power-of-two guard against activations above f16's range. Emulation (an
 * option for tests) runs the same kernel with plain-WGSL stand-ins for the matrix builtins on any adapter.
 */

import type { ExtraWgsl } from './compose.js';
import { shaderSource } from './compose.js';

/** The WebGPU feature name. */
export const SUBGROUP_MATRIX_FEATURE = 'chromium-experimental-subgroup-matrix';

/** One matrix shape an adapter reports (an entry of `GPUAdapterInfo.subgroupMatrixConfigs`). */
export interface SubgroupMatrixConfig {
  /** Element type of the left and right matrices ('f16', 'f32', 'i8', …). */
  readonly componentType: string;
  /** Element type of the result matrix. */
  readonly resultComponentType: string;
  readonly M: number;
  readonly N: number;
  readonly K: number;
}

/**
 * Subgroup-matrix gemm choice of GpuDeviceOptions: 'auto' (default: used when the adapter offers the feature),
 * 'off', or `{ emulate }`: act as if the adapter reported these configs and run the kernel with plain-WGSL
 * stand-ins for the builtins (tests of the tiling on adapters without the feature; slow).
 */
export type SubgroupMatrixOption = 'auto' | 'off' | { readonly emulate: readonly SubgroupMatrixConfig[] };

/** What the device offers for gemm_sm (GpuContext.subgroupMatrix). */
export interface SubgroupMatrixSupport {
  readonly configs: readonly SubgroupMatrixConfig[];
  /** Largest subgroup size of the adapter: the lanes a subgroup of the tile is laid out for. */
  readonly lanes: number;
  /** Plain-WGSL stand-ins instead of the builtins (see SubgroupMatrixOption). */
  readonly emulated: boolean;
}

/** One gemm_sm variant: matrix shape, component type and the tile it gives. */
export interface SubgroupMatrixTile {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly component: 'f16' | 'f32';
  /** Invocations per workgroup (4 subgroups of `lanes`). */
  readonly wgSize: number;
  /** Weight rows and tokens per workgroup tile. */
  readonly rows: number;
  readonly tokens: number;
  /** Pipeline key tag, e.g. `sm16x16x16h` or `emu8x8x8f`. */
  readonly tag: string;
  readonly extra: ExtraWgsl;
}

/** k per staged step. */
const KT = 32;
/** Subgroups per workgroup along rows and tokens, result matrices per subgroup along each (as in gemm_sm.wgsl). */
const SG_M = 2;
const SG_N = 2;
const TM = 2;
const TN = 2;
/** Weight types whose f16-rounded staged values stay within tolerance (the others need f32 components). */
const F16_SAFE = new Set(['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0']);

/**
 * The support the device has: `option` decides (emulation, off), else the feature on the device and subgroups on
 * (the kernel reads `subgroup_size`); null when gemm_sm cannot run.
 */
export function subgroupMatrixSupport(
  option: SubgroupMatrixOption | undefined,
  device: GPUDevice,
  info: GPUAdapterInfo | undefined,
  subgroups: boolean,
): SubgroupMatrixSupport | null {
  if (option === 'off') return null;
  if (option !== undefined && option !== 'auto') return { configs: option.emulate, lanes: 32, emulated: true };
  if (!subgroups || !device.features.has(SUBGROUP_MATRIX_FEATURE)) return null;
  const extra = info as (GPUAdapterInfo & { subgroupMatrixConfigs?: readonly SubgroupMatrixConfig[] }) | undefined;
  const configs = extra?.subgroupMatrixConfigs ?? [];
  const lanes = (info as { subgroupMaxSize?: number } | undefined)?.subgroupMaxSize ?? 32;
  return configs.length > 0 ? { configs: [...configs], lanes, emulated: false } : null;
}

/** Workgroup bytes of a tile (tiles, result staging, |x| partials, scales). */
function workgroupBytes(c: SubgroupMatrixConfig, component: 'f16' | 'f32', lanes: number): number {
  const rows = SG_M * TM * c.M;
  const tokens = SG_N * TN * c.N;
  const size = component === 'f16' ? 2 : 4;
  const pk = KT + 16 / size;
  return (rows + tokens) * pk * size + tokens * (rows + 4) * 4 + SG_M * SG_N * lanes * 4 + tokens * 4;
}

/**
 * The gemm_sm tile for weights of `typeName` (a layout name such as `q4_0` or `q4_0_rows`), or null to run the plain
 * gemm: a config with f32 results, f32 components preferred, f16 components for F16_SAFE types when `f16` (the
 * device has shader-f16), K dividing the 32-k step, within the device's workgroup limits.
 */
export function subgroupMatrixTile(
  s: SubgroupMatrixSupport,
  typeName: string,
  f16: boolean,
  limits: Pick<GPUSupportedLimits, 'maxComputeWorkgroupStorageSize' | 'maxComputeInvocationsPerWorkgroup'>,
): SubgroupMatrixTile | null {
  const wgSize = SG_M * SG_N * s.lanes;
  if (wgSize > limits.maxComputeInvocationsPerWorkgroup) return null;
  const base = typeName.replace(/_rows$/, '');
  const fits = (c: SubgroupMatrixConfig, component: 'f16' | 'f32'): boolean =>
    c.componentType === component &&
    c.resultComponentType === 'f32' &&
    c.M > 0 &&
    c.N > 0 &&
    c.K > 0 &&
    KT % c.K === 0 &&
    (SG_N * TN * c.N) % 4 === 0 &&
    wgSize % (SG_N * TN * c.N) === 0 &&
    workgroupBytes(c, component, s.lanes) <= limits.maxComputeWorkgroupStorageSize;
  let component: 'f16' | 'f32' = 'f32';
  let config = s.configs.find((c) => fits(c, 'f32'));
  if (!config && f16 && F16_SAFE.has(base)) {
    component = 'f16';
    config = s.configs.find((c) => fits(c, 'f16'));
  }
  if (!config) return null;
  const { M: m, N: n, K: k } = config;
  const size = component === 'f16' ? 2 : 4;
  const rows = SG_M * TM * m;
  const tokens = SG_N * TN * n;
  const prelude = [
    `const SM_M: u32 = ${m}u;`,
    `const SM_N: u32 = ${n}u;`,
    `const SM_K: u32 = ${k}u;`,
    `alias CT = ${component};`,
    `const LANES: u32 = ${s.lanes}u;`,
    `const KT: u32 = ${KT}u;`,
    `const PK: u32 = ${KT + 16 / size}u; // tile row pitch: 16 bytes of padding`,
    `const PO: u32 = ${rows + 4}u;`,
    `const GUARD: bool = ${component === 'f16'};`,
  ].join('\n');
  // f16 components are only taken with `f16`, where the composed prelude already enables f16.
  const directives = s.emulated
    ? []
    : ['enable chromium_experimental_subgroup_matrix;', 'diagnostic(off, chromium.subgroup_matrix_uniformity);'];
  const snippet = shaderSource(s.emulated ? 'matrix/emulated' : 'matrix/subgroup');
  return {
    m,
    n,
    k,
    component,
    wgSize,
    rows,
    tokens,
    tag: `${s.emulated ? 'emu' : 'sm'}${m}x${n}x${k}${component === 'f16' ? 'h' : 'f'}.l${s.lanes}`,
    extra: { directives, wgsl: `${prelude}\n${snippet}` },
  };
}
