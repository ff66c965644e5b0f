/**
 * Compute pipelines, cached under one readable key per variant (`gemv.q4_k.f16.sg.wg64`) that is also the
 * pipeline's label, so a validation error names the variant. Each kernel entry point declares its bindings here
 * (binding 0 is always the per-dispatch uniform block, bound with a dynamic offset into the step's params arena).
 * A variant's GPU pipeline is compiled when first needed: by `buildPending` with `createComputePipelineAsync`
 * (the backend's warmup learns the variants a step uses by recording it without running it), else synchronously
 * at its first dispatch.
 */

import { SHADER_STAGE_COMPUTE } from './gpu-flags.js';
import { LlmError } from '../../errors.js';
import { composeShader, type ElementType, type ExtraWgsl, type KernelName } from './compose.js';

/** How a binding is used: the dynamic-offset params block, a read-only or a read-write storage buffer. */
export type BindingKind = 'uniform' | 'read' | 'rw';

/** Bindings of every kernel entry point, by binding number (index in the array; null = not used by that entry). */
export const ENTRY_BINDINGS: Readonly<Record<string, readonly (BindingKind | null)[]>> = {
  'gemv.main': ['uniform', 'read', 'read', 'rw', 'read', 'read', 'rw', 'rw'],
  'gemv_rows.main': ['uniform', 'read', 'read', 'rw', 'read'],
  'gemv_sg.main': ['uniform', 'read', 'read', 'rw', 'read', 'read', 'rw', 'rw'],
  'gemv_bcast.main': ['uniform', 'read', 'read', 'rw', 'read', 'read', 'read', 'read', 'read'],
  'gemm.main': ['uniform', 'read', 'read', 'rw', 'read'],
  'gemm_sm.main': ['uniform', 'read', 'read', 'rw', 'read'],
  'embed.main': ['uniform', 'read', 'read', 'rw'],
  'rms_norm.main': ['uniform', 'read', 'rw', 'read'],
  'rms_norm.main_inplace': ['uniform', null, 'rw', 'read'],
  'rope.main': ['uniform', 'rw', 'read'],
  'rope_store.main': ['uniform', 'rw', 'rw', 'read', 'read', 'rw', 'rw'],
  'rope_multi.main': ['uniform', 'rw', 'read', 'read'],
  'store_kv.main': ['uniform', 'read', 'read', 'rw', 'rw'],
  'copy_kv.main': ['uniform', 'rw', 'rw'],
  'attention.main': ['uniform', 'read', 'read', 'read', 'rw', 'rw'],
  'attention_combine.main': ['uniform', 'read', 'rw', 'read'],
  'attention_prefill.main': ['uniform', 'read', 'read', 'read', 'rw', 'rw'],
  'glu.main': ['uniform', 'read', 'read', 'rw'],
  'glu.main_out_gate': ['uniform', null, 'read', 'rw'],
  'glu.main_out_up': ['uniform', 'read', null, 'rw'],
  'glu.main_oai': ['uniform', 'read', 'read', 'rw'],
  'glu.main_act': ['uniform', null, null, 'rw'],
  'layer_norm.main': ['uniform', 'read', 'rw', 'read', 'read'],
  'layer_norm.main_inplace': ['uniform', null, 'rw', 'read', 'read'],
  'add.main': ['uniform', 'read', 'read', 'rw'],
  'add.main_out_a': ['uniform', null, 'read', 'rw'],
  'scale.main': ['uniform', 'rw'],
  'copy_rows.main': ['uniform', 'read', 'rw'],
  'copy_rows.main_same': ['uniform', null, 'rw'],
  'short_conv.main': ['uniform', 'read', 'rw', 'read', 'rw'],
  'short_conv.update': ['uniform', 'read', 'rw', null, null],
  'short_conv.copy': ['uniform', null, 'rw', null, null],
  'delta_net.main': ['uniform', 'read', 'rw', 'read', 'rw', null, null, null, null, null, null, null],
  'delta_net.update': ['uniform', 'read', 'rw', null, null, null, null, null, null, null, null, null],
  'delta_net.l2norm': ['uniform', null, null, null, 'rw', null, null, null, null, null, null, null],
  'delta_net.rule': ['uniform', null, 'rw', null, 'rw', 'read', 'read', 'read', 'read', 'rw', null, null],
  'delta_net.gated_norm': ['uniform', null, null, null, null, null, null, null, null, 'rw', 'read', 'read'],
  'mamba2.main': ['uniform', 'read', 'rw', 'read', 'rw', 'read', null, null, null, null, null],
  'mamba2.update': ['uniform', 'read', 'rw', null, null, null, null, null, null, null, null],
  'mamba2.scan': ['uniform', 'read', 'rw', null, 'rw', null, 'read', 'read', 'read', 'rw', null],
  'mamba2.gated_norm': ['uniform', null, null, null, null, null, null, null, null, 'rw', 'read'],
  'relu_sqr.main': ['uniform', 'rw'],
  'gated_attn.main': ['uniform', 'read', 'rw', 'rw'],
  'gated_attn.mul_sigmoid': ['uniform', null, 'rw', 'rw'],
  'argmax.main': ['uniform', 'read', 'rw'],
  'topk_radix.main': ['uniform', 'read', 'rw'],
  'gemv_id.main': ['uniform', 'read', 'read', 'rw', 'read'],
  'gemv_id.main_rows': ['uniform', 'read', 'read', 'rw', 'read'],
  'gemv_id_dot.main': ['uniform', 'read', 'read', 'rw', 'read', 'read'],
  'moe_route.main': ['uniform', 'read', 'rw', 'rw', 'read', 'read'],
  'moe_combine.main': ['uniform', 'read', 'read', 'rw'],
  'moe_combine.main_gated': ['uniform', 'read', 'read', 'rw'],
  'moe_combine.main_bias': ['uniform', 'read', 'read', 'rw'],
  'altup.main': ['uniform', 'rw', 'read', 'read'],
  'altup.mul_vector': ['uniform', 'rw', null, 'read'],
  'altup.match_mag': ['uniform', 'rw', 'read', null],
  'altup.gauss_topk': ['uniform', 'rw', null, null],
  'delta_net.rule_heads': ['uniform', null, 'rw', null, 'rw', 'read', 'read', 'read', 'read', 'rw', null, null],
  'mamba2.scan_heads': ['uniform', 'read', 'rw', null, 'rw', null, 'read', 'read', 'read', 'rw', null],
};

/** Which variant of a kernel to build. */
export interface PipelineSpec {
  readonly kernel: KernelName;
  /** Entry point (default `main`). */
  readonly entry?: string;
  /** Quant type name (`q4_k`) and its snippet, for kernels that read weights. */
  readonly quant?: { readonly name: string; readonly wgsl: string };
  /** Workgroup size (the WG_SIZE override); a power of two ≤ 256. */
  readonly wgSize: number;
  /** Boolean/number overrides beyond WG_SIZE, with a short tag for the key (e.g. `{ IS_GELU: true }`, 'gelu'). */
  readonly constants?: Readonly<Record<string, number | boolean>>;
  readonly tag?: string;
  /** Extra directives and WGSL (see ComposeInput.extra); `tag` must tell the variants apart. */
  readonly extra?: ExtraWgsl;
}

/** A built pipeline with what recording a dispatch needs. */
export interface CachedPipeline {
  readonly label: string;
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  /** Binding kinds by binding number (null = absent). */
  readonly bindings: readonly (BindingKind | null)[];
}

/** A cached variant: its layout at once, its GPU pipeline compiled asynchronously or at its first use. */
class PipelineEntry implements CachedPipeline {
  private built: GPUComputePipeline | null = null;
  private building: Promise<void> | null = null;

  constructor(
    private readonly device: GPUDevice,
    readonly label: string,
    readonly layout: GPUBindGroupLayout,
    readonly bindings: readonly (BindingKind | null)[],
    private readonly descriptor: GPUComputePipelineDescriptor,
  ) {}

  /** The GPU pipeline, compiled synchronously now if no asynchronous build has finished. */
  get pipeline(): GPUComputePipeline {
    this.built ??= this.device.createComputePipeline(this.descriptor);
    return this.built;
  }

  /** True once the GPU pipeline exists. */
  get isBuilt(): boolean {
    return this.built !== null;
  }

  /** Compiles the GPU pipeline with `createComputePipelineAsync` (a failed build is retried, synchronously, at first use). */
  buildAsync(): Promise<void> {
    this.building ??= this.device.createComputePipelineAsync(this.descriptor).then(
      (p) => {
        this.built ??= p;
      },
      () => {},
    );
    return this.building;
  }
}

/** Pipeline-overridable constants as WebGPU wants them: numbers (booleans become 1 / 0). */
function overrideValues(spec: PipelineSpec): Record<string, number> {
  const values: Record<string, number> = { WG_SIZE: spec.wgSize };
  for (const [name, v] of Object.entries(spec.constants ?? {})) values[name] = typeof v === 'boolean' ? Number(v) : v;
  return values;
}

/** Pipelines of every device, so backends re-created on one device (a new model, a test) reuse them. */
const DEVICE_CACHES = new WeakMap<GPUDevice, Map<string, PipelineEntry>>();

/** A variant found before: the spec fields its key is made of, for lookups that build no key string. */
interface KnownVariant {
  readonly entry: string | undefined;
  readonly tag: string | undefined;
  readonly quant: string | undefined;
  readonly wgSize: number;
  readonly pipe: CachedPipeline;
}

/** Builds and caches pipelines for one device and one capability choice (dtype, subgroups). */
export class PipelineCache {
  private readonly cache: Map<string, PipelineEntry>;
  /** Per kernel, the variants this cache has handed out (looked up per dispatch by comparing fields). */
  private readonly known = new Map<string, KnownVariant[]>();

  constructor(
    private readonly device: GPUDevice,
    readonly dtype: ElementType,
    readonly subgroups: boolean,
    private readonly paramsBindingSize: number,
  ) {
    let shared = DEVICE_CACHES.get(device);
    if (!shared) {
      shared = new Map();
      DEVICE_CACHES.set(device, shared);
    }
    this.cache = shared;
  }

  /** The readable key of a variant, e.g. `gemv.q4_0.f16.sg.wg64` or `glu.gelu.f32.wg256`. */
  key(spec: PipelineSpec): string {
    const entry = spec.entry && spec.entry !== 'main' ? `.${spec.entry}` : '';
    const quant = spec.quant ? `.${spec.quant.name}` : '';
    const tag = spec.tag ? `.${spec.tag}` : '';
    return `${spec.kernel}${entry}${tag}${quant}.${this.dtype}${this.subgroups ? '.sg' : ''}.wg${spec.wgSize}`;
  }

  /** Number of pipelines built so far on this device. */
  get size(): number {
    return this.cache.size;
  }

  /** The pipeline for `spec`, built on first use (a variant used before is found without building its key). */
  get(spec: PipelineSpec): CachedPipeline {
    const variants = this.known.get(spec.kernel);
    if (variants) {
      for (let i = 0; i < variants.length; i++) {
        const v = variants[i]!;
        if (v.wgSize === spec.wgSize && v.entry === spec.entry && v.tag === spec.tag && v.quant === spec.quant?.name)
          return v.pipe;
      }
    }
    const pipe = this.lookup(spec);
    const list = variants ?? [];
    if (!variants) this.known.set(spec.kernel, list);
    list.push({ entry: spec.entry, tag: spec.tag, quant: spec.quant?.name, wgSize: spec.wgSize, pipe });
    return pipe;
  }

  /** `get` by the readable key: the device's shared cache, else a new pipeline. */
  private lookup(spec: PipelineSpec): CachedPipeline {
    const label = this.key(spec);
    const hit = this.cache.get(label);
    if (hit) return hit;
    const entry = spec.entry ?? 'main';
    const bindings = ENTRY_BINDINGS[`${spec.kernel}.${entry}`];
    if (!bindings) {
      throw new LlmError(
        'invalid-request',
        `building pipeline ${label}: no binding table for entry ${spec.kernel}.${entry}`,
      );
    }
    const code = composeShader({
      kernel: spec.kernel,
      quantWgsl: spec.quant?.wgsl,
      dtype: this.dtype,
      subgroups: this.subgroups,
      extra: spec.extra,
    });
    const module = this.device.createShaderModule({ label, code });
    const entries: GPUBindGroupLayoutEntry[] = [];
    bindings.forEach((kind, binding) => {
      if (kind === null) return;
      entries.push({
        binding,
        visibility: SHADER_STAGE_COMPUTE,
        buffer:
          kind === 'uniform'
            ? { type: 'uniform', hasDynamicOffset: true, minBindingSize: this.paramsBindingSize }
            : { type: kind === 'read' ? 'read-only-storage' : 'storage' },
      });
    });
    const layout = this.device.createBindGroupLayout({ label, entries });
    const built = new PipelineEntry(this.device, label, layout, bindings, {
      label,
      layout: this.device.createPipelineLayout({ label, bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: entry, constants: overrideValues(spec) },
    });
    this.cache.set(label, built);
    return built;
  }

  /** Compiles, with `createComputePipelineAsync`, every variant looked up so far that is not built; resolves when done. */
  async buildPending(): Promise<void> {
    const builds: Promise<void>[] = [];
    for (const e of this.cache.values()) if (!e.isBuilt) builds.push(e.buildAsync());
    await Promise.all(builds);
  }
}
