/**
 * `qwen2vl` and `qwen3vl` (Qwen2-VL / Qwen2.5-VL and Qwen3-VL language models): qwen2's block with Q/K/V biases, and
 * qwen3's with per-head q/k norms, each with `rope.dimension_sections` (`--shape sec_t=…,sec_h=…,sec_w=…,sec_e=…`;
 * the defaults keep the real models' proportions over 32 pairs: Qwen2-VL's [16, 24, 24, 0] of 64 and Qwen3-VL's
 * [24, 20, 20, 0], whose interleaved layout leaves the last pair to the e stream, which text rows hold at 0).
 */

import { extra, plan, SMALL_SHAPE, type SyntheticArchSpec, u32, u32Array } from '../arch-spec.js';
import type { ModelShape } from '../arch-plan.js';

/** The sections of a shape: `sec_*` knobs over the defaults. */
const sections = (s: ModelShape, d: readonly number[]): number[] =>
  ['sec_t', 'sec_h', 'sec_w', 'sec_e'].map((k, i) => extra(s, k, d[i]!));

/** qwen2vl. */
export const qwen2vl: SyntheticArchSpec = {
  name: 'qwen2vl',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: false },
  metadata: (s) => ({ 'qwen2vl.rope.dimension_sections': u32Array(sections(s, [8, 12, 12, 0])) }),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => plan.llamaBlock(s, il, { qkvBias: true })).flat(),
    ...plan.head(s),
  ],
};

/** qwen3vl (`--shape deepstack=N` sets `n_deepstack_layers`, default 2: text rows add nothing). */
export const qwen3vl: SyntheticArchSpec = {
  name: 'qwen3vl',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: true },
  metadata: (s) => ({
    'qwen3vl.rope.dimension_sections': u32Array(sections(s, [12, 10, 10, 0])),
    'qwen3vl.n_deepstack_layers': u32(extra(s, 'deepstack', 2)),
  }),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => plan.llamaBlock(s, il, { qkNorm: true })).flat(),
    ...plan.head(s),
  ],
};
