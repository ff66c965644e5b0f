/**
 * Sources of the software-adapter decode kernel `gemv_bcast` (shaders/kernels/gemv_bcast.wgsl): the weight type's
 * quant snippet plus its `dot32` block product (a fast per-type form for Q4_0, Q8_0, Q4_K, Q5_K and Q6_K over the
 * software set's layout, else the generic one over load4) and, for the fused gate/up/GLU variant, a second `dot32_up`
 * reading the `up_w` binding.
 */

import { LlmError } from '../../errors.js';
import { QUANT_TYPES } from '../../quant/index.js';
import { shaderSource } from './compose.js';
import { getGpuQuantLayout, type GpuQuantLayout } from './upload.js';

/**
 * Layouts with a block product that reads only `weights[…]` / `weights4[…]` and value helpers, so a renamed copy
 * reads `up_w…`, by the software layout's name (`quant/<name>_dot32`: `q6_k_i8` for Q6_K's re-coded blocks). The
 * WGSL (like gemv_bcast's and gemv_id_dot's own) is a feature shader: read when a kernel is composed, after
 * `loadFeatureShaders` (createWebGpuOps awaits it on software adapters, loadTransformer for MoE models).
 */
const FAST_DOT32_NAMES: ReadonlySet<string> = new Set(
  QUANT_TYPES.filter((t) => t.webgpu.fastDot32).map((t) => getGpuQuantLayout(t.id, t.name, 'software').name),
);

/** The fast `dot32` of a layout named in FAST_DOT32_NAMES, else undefined. */
function fastDot32(name: string): string | undefined {
  return FAST_DOT32_NAMES.has(name) ? shaderSource(`quant/${name}_dot32`) : undefined;
}

/** Stub of dot32_up for the variants without IS_GLU (the kernel references it under an override). */
const DOT32_UP_STUB =
  'fn dot32_up(base: u32, b: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>, x4: vec4<f32>, ' +
  'x5: vec4<f32>, x6: vec4<f32>, x7: vec4<f32>, sx: f32) -> f32 { return 0.0; }';

/** Elements per `dot32` step: rows must be a whole number of them. */
export const BCAST_BLOCK = 32;

/** True when `gemv_bcast` can fuse gate and up of this type into one pass (needs a fast dot32). */
export function canFuseGlu(layout: GpuQuantLayout): boolean {
  return FAST_DOT32_NAMES.has(layout.name);
}

/** Layouts with their fast `dot32` composed, made once per layout (the expert matmul asks per call). */
const WITH_DOT32 = new WeakMap<GpuQuantLayout, GpuQuantLayout>();

/** `layout` with its type's fast `dot32` composed after the snippet (gemv_id_dot; only where `canFuseGlu`). */
export function withFastDot32(layout: GpuQuantLayout): GpuQuantLayout {
  let composed = WITH_DOT32.get(layout);
  if (composed === undefined) {
    const dot = fastDot32(layout.name);
    if (dot === undefined) throw new LlmError('invalid-request', `no fast dot32 for ${layout.name}`);
    composed = { ...layout, wgsl: `${layout.wgsl}\n${dot}` };
    WITH_DOT32.set(layout, composed);
  }
  return composed;
}

/**
 * The quant source (`name` for the pipeline key, `wgsl` to compose) of gemv_bcast for `layout`; with `glu`, also
 * the `dot32_up` over the up-projection binding (only for types where `canFuseGlu`).
 */
export function bcastQuantSource(
  layout: GpuQuantLayout,
  glu: boolean,
): { readonly name: string; readonly wgsl: string } {
  const fast = fastDot32(layout.name);
  const dot = fast ?? shaderSource('quant/dot32');
  const up =
    glu && fast
      ? fast.replaceAll('weights4[', 'up_w4[').replaceAll('weights[', 'up_w[').replace('fn dot32(', 'fn dot32_up(')
      : DOT32_UP_STUB;
  return { name: layout.name, wgsl: [layout.wgsl, dot, up].join('\n') };
}
