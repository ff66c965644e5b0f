/**
 * `falcon-h1` (Falcon-H1): every layer is attention (neox rope) and a Mamba-2 mixer side by side on the same normed
 * input, then a gated SiLU FFN with llama.cpp's suffix-less `blk.N.ffn_norm`. Mamba-2 knobs: `ssm_heads`
 * (ssm.time_step_rank; 8), `ssm_head_dim` (32), `n_group` (1), `d_state` (32), `d_conv` (4), `ssm_norm` (1: with
 * ssm_norm; llama.cpp's converter writes it only for models with `mamba_rms_norm`).
 */

import { extra, plan, SMALL_SHAPE, type SyntheticArchSpec } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { mamba2Dims, mamba2Metadata, type Mamba2SpecDims } from './mamba2-dims.js';

const NAME = 'falcon-h1';

const ssm = (s: ModelShape): Mamba2SpecDims =>
  mamba2Dims(s, { dState: 32, nGroup: 1 }, (h) => h * extra(s, 'ssm_head_dim', 32));

/** falcon-h1. */
export const falconH1: SyntheticArchSpec = {
  name: NAME,
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: false },
  metadata: (s) => {
    const d = ssm(s);
    return {
      ...mamba2Metadata(NAME, d),
    };
  },
  tensors: (s) => {
    const E = s.nEmbd;
    const d = ssm(s);
    const qDim = s.nHead * s.headDim;
    const kvDim = s.nHeadKv * s.headDim;
    const block = (il: number): TensorPlan[] => {
      const b = `blk.${il}.`;
      return [
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
        ...(extra(s, 'ssm_norm', 1)
          ? [
              {
                name: `${b}ssm_norm.weight`,
                shape: [d.inner / d.nGroup, d.nGroup],
                kind: 'norm' as const,
                std: 0.1,
                center: 1,
              },
            ]
          : []),
        plan.mat(`${b}ssm_out.weight`, d.inner, E),
        plan.mat(`${b}attn_q.weight`, E, qDim),
        plan.mat(`${b}attn_k.weight`, E, kvDim),
        plan.mat(`${b}attn_v.weight`, E, kvDim),
        plan.mat(`${b}attn_output.weight`, qDim, E),
        plan.norm(`${b}attn_norm.weight`, E),
        plan.norm(`${b}ffn_norm`, E),
        plan.mat(`${b}ffn_gate.weight`, E, s.nFf),
        plan.mat(`${b}ffn_up.weight`, E, s.nFf),
        plan.mat(`${b}ffn_down.weight`, s.nFf, E),
      ];
    };
    return [plan.embedding(s), ...Array.from({ length: s.nLayer }, (_, il) => block(il)).flat(), ...plan.head(s)];
  },
};
