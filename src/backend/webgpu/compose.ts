/**
 * WGSL composition: a pipeline's source is whole files concatenated — a generated prelude (`enable` lines and the
 * `F` element-type alias), one reduction file, the quant bit helpers and one quant snippet when the kernel reads
 * weights, then the kernel itself. No preprocessor: numbers are `override` constants set at pipeline creation.
 * Shaders are discovered by glob (Vite's import.meta.glob, inlined at build time), not imported one by one.
 */

import { LlmError } from '../../errors.js';
import { loadChunk } from '../../io/load-chunk.js';

/** Every WGSL file under shaders/, by path relative to that folder without `.wgsl` (`kernels/gemv`, `quant/q4_0`). */
const SHADERS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(
    // The IQ grid tables (shaders/quant/tables/) come with the lazily loaded grids (src/quant/iq-grids.ts); the WGSL
    // of feature-shaders.ts (same globs as there) with its own chunk (loadFeatureShaders).
    import.meta.glob<string>(
      [
        '../../../shaders/**/*.wgsl',
        '!../../../shaders/quant/tables/*.wgsl',
        '!../../../shaders/kernels/{delta_net,mamba2,short_conv,gated_attn,relu_sqr,layer_norm,moe_route,moe_combine,gemv_id,gemv_id_dot,altup,gemm_sm,rope_multi,gemv_bcast}.wgsl',
        '!../../../shaders/matrix/*.wgsl',
        '!../../../shaders/quant/iq{1,2,3}_*.wgsl',
        '!../../../shaders/quant/*dot32.wgsl',
      ],
      { query: '?raw', import: 'default', eager: true },
    ),
  ).map(([path, src]) => [path.replace(/^.*\/shaders\//, '').replace(/\.wgsl$/, ''), src]),
);

/** The feature shaders (feature-shaders.ts) once loadFeatureShaders has resolved. */
let featureShaders: Readonly<Record<string, string>> = {};
let featureLoad: Promise<void> | null = null;

/**
 * Imports the WGSL of the recurrent, MoE, AltUp, IQ and subgroup-matrix kernels (a separate chunk, see
 * feature-shaders.ts). `loadTransformer` awaits it for a model that needs them, `requestGpuContext` for a device with
 * subgroup matrices; idempotent.
 */
export function loadFeatureShaders(): Promise<void> {
  featureLoad ??= loadChunk('WebGPU feature kernels', () => import('./feature-shaders.js')).then(
    (m) => {
      featureShaders = m.FEATURE_SHADERS;
    },
    (e: unknown) => {
      featureLoad = null; // a failed fetch may succeed on the next load
      throw e;
    },
  );
  return featureLoad;
}

/** The WGSL of shaders/<name>.wgsl (`common/bits`, `quant/q4_0` …). @throws LlmError when there is no such file. */
export function shaderSource(name: string): string {
  const src = SHADERS[name] ?? featureShaders[name];
  if (src === undefined)
    throw new LlmError(
      'invalid-request',
      `no shader shaders/${name}.wgsl (have: ${Object.keys({ ...SHADERS, ...featureShaders })
        .sort()
        .join(', ')}; the recurrent, MoE, AltUp, IQ and subgroup-matrix kernels need loadFeatureShaders() first)`,
    );
  return src;
}

/** Names of the kernels in shaders/kernels/ (file name without `.wgsl`), discovered by glob: a new kernel is one file. */
export type KernelName = string;

/** The source of shaders/kernels/<kernel>.wgsl, or undefined (a feature kernel before loadFeatureShaders). */
export function kernelSource(kernel: KernelName): string | undefined {
  return SHADERS[`kernels/${kernel}`] ?? featureShaders[`kernels/${kernel}`];
}

/** Names of every kernel discovered (the feature kernels once loaded). */
export function kernelNames(): KernelName[] {
  return Object.keys({ ...SHADERS, ...featureShaders })
    .filter((name) => name.startsWith('kernels/'))
    .map((name) => name.slice('kernels/'.length));
}

const bitsWgsl = shaderSource('common/bits');
const reduceSharedWgsl = shaderSource('common/reduce_shared');
const reduceSubgroupWgsl = shaderSource('common/reduce_subgroup');
const ropeMathWgsl = shaderSource('common/rope_math');
const gemvIoWgsl = shaderSource('common/gemv_io');
const weightSpanWgsl = shaderSource('common/weight_span');

/** Common snippets a kernel needs besides the reductions (composed before the kernel's own source). */
const KERNEL_SNIPPETS: Partial<Readonly<Record<KernelName, string>>> = {
  rope: ropeMathWgsl,
  rope_store: ropeMathWgsl,
  rope_multi: ropeMathWgsl,
  gemv: gemvIoWgsl,
  gemv_sg: gemvIoWgsl,
  // the binding's span, where row-split snippets find the scales (gemv_io defines its own for gemv / gemv_sg)
  embed: weightSpanWgsl,
  gemm: weightSpanWgsl,
  gemm_sm: weightSpanWgsl,
  gemv_id: weightSpanWgsl,
  gemv_id_dot: weightSpanWgsl,
  gemv_rows: weightSpanWgsl,
};

/**
 * A kernel's own source with the common snippet it declares its interface in (Params, bindings) prepended: what a
 * host ↔ WGSL interface check reads. @throws LlmError when there is no such kernel.
 */
export function kernelInterfaceSource(kernel: KernelName): string {
  const src = kernelSource(kernel);
  if (src === undefined) throw new LlmError('invalid-request', `no kernel shaders/kernels/${kernel}.wgsl`);
  const snippet = KERNEL_SNIPPETS[kernel];
  return snippet === undefined ? src : `${snippet}\n${src}`;
}

/** Storage element type of the KV cache and of gemm's tiles: f16 needs the `shader-f16` feature. */
export type ElementType = 'f16' | 'f32';

/** What a pipeline's source is built from. */
export interface ComposeInput {
  readonly kernel: KernelName;
  /** WGSL of the weight type's snippet (shaders/quant/<type>.wgsl) for kernels that read weights. */
  readonly quantWgsl?: string;
  readonly dtype: ElementType;
  /** Use subgroup reductions (the device must have the `subgroups` feature). */
  readonly subgroups: boolean;
  /** Extra global directives (after the `enable` lines) and WGSL composed just before the kernel (gemm_sm's matrix snippet). */
  readonly extra?: ExtraWgsl;
}

/** WGSL a pipeline variant adds to the composition (see ComposeInput.extra). */
export interface ExtraWgsl {
  /** Global directives (`enable …;`, `diagnostic(…);`), placed before any declaration. */
  readonly directives: readonly string[];
  /** Declarations composed just before the kernel. */
  readonly wgsl: string;
}

/** The WGSL source of one pipeline variant. */
export function composeShader(input: ComposeInput): string {
  const lines: string[] = [];
  if (input.dtype === 'f16') lines.push('enable f16;');
  if (input.subgroups) lines.push('enable subgroups;');
  if (input.extra) lines.push(...input.extra.directives);
  lines.push(`alias F = ${input.dtype};`);
  const prelude = lines.join('\n');
  const parts = [prelude, input.subgroups ? reduceSubgroupWgsl : reduceSharedWgsl];
  if (input.quantWgsl !== undefined) parts.push(bitsWgsl, input.quantWgsl);
  const snippet = KERNEL_SNIPPETS[input.kernel];
  if (snippet !== undefined) parts.push(snippet);
  if (input.extra) parts.push(input.extra.wgsl);
  const kernel = kernelSource(input.kernel);
  if (kernel === undefined) throw new LlmError('invalid-request', `no kernel shaders/kernels/${input.kernel}.wgsl`);
  parts.push(kernel);
  return parts.join('\n');
}
