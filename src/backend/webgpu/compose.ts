/**
 * WGSL composition: a pipeline's source is whole files concatenated — a generated prelude (`enable` lines and the
 * `F` element-type alias), one reduction file, the quant bit helpers and one quant snippet when the kernel reads
 * weights, then the kernel itself. No preprocessor: numbers are `override` constants set at pipeline creation.
 */

import bitsWgsl from '../../../shaders/common/bits.wgsl?raw';
import reduceSharedWgsl from '../../../shaders/common/reduce_shared.wgsl?raw';
import reduceSubgroupWgsl from '../../../shaders/common/reduce_subgroup.wgsl?raw';
import ropeMathWgsl from '../../../shaders/common/rope_math.wgsl?raw';
import addWgsl from '../../../shaders/kernels/add.wgsl?raw';
import argmaxWgsl from '../../../shaders/kernels/argmax.wgsl?raw';
import attentionCombineWgsl from '../../../shaders/kernels/attention_combine.wgsl?raw';
import attentionPrefillWgsl from '../../../shaders/kernels/attention_prefill.wgsl?raw';
import attentionWgsl from '../../../shaders/kernels/attention.wgsl?raw';
import copyKvWgsl from '../../../shaders/kernels/copy_kv.wgsl?raw';
import copyRowsWgsl from '../../../shaders/kernels/copy_rows.wgsl?raw';
import embedWgsl from '../../../shaders/kernels/embed.wgsl?raw';
import gemmWgsl from '../../../shaders/kernels/gemm.wgsl?raw';
import gemvBcastWgsl from '../../../shaders/kernels/gemv_bcast.wgsl?raw';
import gemvSgWgsl from '../../../shaders/kernels/gemv_sg.wgsl?raw';
import gemvRowsWgsl from '../../../shaders/kernels/gemv_rows.wgsl?raw';
import gemvWgsl from '../../../shaders/kernels/gemv.wgsl?raw';
import gluWgsl from '../../../shaders/kernels/glu.wgsl?raw';
import rmsNormWgsl from '../../../shaders/kernels/rms_norm.wgsl?raw';
import ropeStoreWgsl from '../../../shaders/kernels/rope_store.wgsl?raw';
import ropeWgsl from '../../../shaders/kernels/rope.wgsl?raw';
import scaleWgsl from '../../../shaders/kernels/scale.wgsl?raw';
import storeKvWgsl from '../../../shaders/kernels/store_kv.wgsl?raw';
import topkChunkWgsl from '../../../shaders/kernels/topk_chunk.wgsl?raw';
import topkMergeWgsl from '../../../shaders/kernels/topk_merge.wgsl?raw';

/** Names of the kernels in shaders/kernels/ (file name without `.wgsl`). */
export type KernelName =
  | 'gemv'
  | 'gemv_rows'
  | 'gemv_sg'
  | 'gemv_bcast'
  | 'gemm'
  | 'embed'
  | 'rms_norm'
  | 'rope'
  | 'rope_store'
  | 'store_kv'
  | 'copy_kv'
  | 'attention'
  | 'attention_combine'
  | 'attention_prefill'
  | 'glu'
  | 'add'
  | 'scale'
  | 'copy_rows'
  | 'argmax'
  | 'topk_chunk'
  | 'topk_merge';

/** Kernel sources by name. */
export const KERNEL_SOURCES: Readonly<Record<KernelName, string>> = {
  gemv: gemvWgsl,
  gemv_rows: gemvRowsWgsl,
  gemv_sg: gemvSgWgsl,
  gemv_bcast: gemvBcastWgsl,
  gemm: gemmWgsl,
  embed: embedWgsl,
  rms_norm: rmsNormWgsl,
  rope: ropeWgsl,
  rope_store: ropeStoreWgsl,
  store_kv: storeKvWgsl,
  copy_kv: copyKvWgsl,
  attention: attentionWgsl,
  attention_combine: attentionCombineWgsl,
  attention_prefill: attentionPrefillWgsl,
  glu: gluWgsl,
  add: addWgsl,
  scale: scaleWgsl,
  copy_rows: copyRowsWgsl,
  argmax: argmaxWgsl,
  topk_chunk: topkChunkWgsl,
  topk_merge: topkMergeWgsl,
};

/** Common snippets a kernel needs besides the reductions (composed before the kernel's own source). */
const KERNEL_SNIPPETS: Partial<Readonly<Record<KernelName, string>>> = {
  rope: ropeMathWgsl,
  rope_store: ropeMathWgsl,
};

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
}

/** The WGSL source of one pipeline variant. */
export function composeShader(input: ComposeInput): string {
  const lines: string[] = [];
  if (input.dtype === 'f16') lines.push('enable f16;');
  if (input.subgroups) lines.push('enable subgroups;');
  lines.push(`alias F = ${input.dtype};`);
  const prelude = lines.join('\n');
  const parts = [prelude, input.subgroups ? reduceSubgroupWgsl : reduceSharedWgsl];
  if (input.quantWgsl !== undefined) parts.push(bitsWgsl, input.quantWgsl);
  const snippet = KERNEL_SNIPPETS[input.kernel];
  if (snippet !== undefined) parts.push(snippet);
  parts.push(KERNEL_SOURCES[input.kernel]);
  return parts.join('\n');
}
