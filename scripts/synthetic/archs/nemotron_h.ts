/**
 * `nemotron_h` (Nemotron-H dense): blocks of three kinds in the repeating pattern M - M * M - (Mamba-2, relu² MLP,
 * attention without rope), marked as llama.cpp's converter does: `feed_forward_length` per layer (n_ff on MLP layers,
 * else 0) and `attention.head_count_kv` per layer (n_head_kv on attention layers, else 0). Mamba-2 knobs:
 * `ssm_heads` (ssm.time_step_rank; 8), `ssm_head_dim` (48: d_inner = 384, not 2·n_embd), `n_group` (4), `d_state`
 * (16), `d_conv` (4).
 */

import { extra, f32, type MetadataEntry, plan, SMALL_SHAPE, type SyntheticArchSpec, u32Array } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { mamba2Dims, mamba2Metadata, type Mamba2SpecDims } from './mamba2-dims.js';

const NAME = 'nemotron_h';
const PATTERN = ['M', '-', 'M', '*', 'M', '-'] as const;
/** A block pattern: M Mamba-2, * attention, anything else the FFN-only block (`-` dense MLP, `E` experts). */
type Pattern = readonly string[];

const ssm = (s: ModelShape): Mamba2SpecDims =>
  mamba2Dims(s, { dState: 16, nGroup: 4 }, (h) => h * extra(s, 'ssm_head_dim', 48));

/** The metadata of nemotron_h's blocks for `arch` (`s.nFf`: the FFN blocks' feed_forward_length). */
export function nemotronHMetadata(arch: string, pattern: Pattern, s: ModelShape): Record<string, MetadataEntry | null> {
  const d = ssm(s);
  const layers = Array.from({ length: s.nLayer }, (_, il) => pattern[il % pattern.length]!);
  return {
    [`${arch}.feed_forward_length`]: u32Array(layers.map((k) => (k === 'M' || k === '*' ? 0 : s.nFf))),
    [`${arch}.attention.head_count_kv`]: u32Array(layers.map((k) => (k === '*' ? s.nHeadKv : 0))),
    ...mamba2Metadata(arch, d),
    [`${arch}.rope.dimension_count`]: null,
    // llama.cpp requires the plain epsilon and falls back to it for the RMS one (absent here, so that is tested).
    [`${arch}.attention.layer_norm_epsilon`]: f32(1e-5),
    [`${arch}.attention.layer_norm_rms_epsilon`]: null,
  };
}

/** The tensors of nemotron_h's blocks, `ffn` giving an FFN-only block's after its attn_norm. */
export function nemotronHTensors(
  pattern: Pattern,
  s: ModelShape,
  ffn: (s: ModelShape, il: number) => TensorPlan[],
): TensorPlan[] {
  const E = s.nEmbd;
  const d = ssm(s);
  const qDim = s.nHead * s.headDim;
  const kvDim = s.nHeadKv * s.headDim;
  const kind = (il: number): string => pattern[il % pattern.length]!;
  const block = (il: number): TensorPlan[] => {
    const b = `blk.${il}.`;
    const norm = plan.norm(`${b}attn_norm.weight`, E);
    if (kind(il) !== 'M' && kind(il) !== '*') return [norm, ...ffn(s, il)];
    if (kind(il) === '*') {
      return [
        norm,
        plan.mat(`${b}attn_q.weight`, E, qDim),
        plan.mat(`${b}attn_k.weight`, E, kvDim),
        plan.mat(`${b}attn_v.weight`, E, kvDim),
        plan.mat(`${b}attn_output.weight`, qDim, E),
      ];
    }
    return [
      norm,
      plan.mat(`${b}ssm_in.weight`, E, d.proj),
      {
        name: `${b}ssm_conv1d.weight`,
        shape: [d.dConv, d.conv],
        kind: 'conv',
        std: 1 / Math.sqrt(d.dConv),
        center: 0,
      },
      plan.bias(`${b}ssm_conv1d.bias`, d.conv, 0.1),
      plan.bias(`${b}ssm_dt.bias`, d.nHeads),
      { name: `${b}ssm_a`, shape: [1, d.nHeads], kind: 'norm', std: 0.3, center: -1 },
      { name: `${b}ssm_d`, shape: [1, d.nHeads], kind: 'norm', std: 0.1, center: 1 },
      { name: `${b}ssm_norm.weight`, shape: [d.inner / d.nGroup, d.nGroup], kind: 'norm', std: 0.1, center: 1 },
      plan.mat(`${b}ssm_out.weight`, d.inner, E),
    ];
  };
  return [plan.embedding(s), ...Array.from({ length: s.nLayer }, (_, il) => block(il)).flat(), ...plan.head(s)];
}

/** nemotron_h. */
export const nemotronH: SyntheticArchSpec = {
  name: NAME,
  shape: { ...SMALL_SHAPE, nLayer: 6, tied: false },
  metadata: (s) => nemotronHMetadata(NAME, PATTERN, s),
  tensors: (s) =>
    nemotronHTensors(PATTERN, s, (sh, il) => [
      plan.mat(`blk.${il}.ffn_up.weight`, sh.nEmbd, sh.nFf),
      plan.mat(`blk.${il}.ffn_down.weight`, sh.nFf, sh.nEmbd),
    ]),
};
