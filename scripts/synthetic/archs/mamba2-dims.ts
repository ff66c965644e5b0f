/**
 * The Mamba-2 mixer's sizes in the synthetic specs (granitehybrid, nemotron_h, falcon-h1) and the `ssm.*` keys that
 * declare them: heads (`ssm_heads`, ssm.time_step_rank), groups (`n_group`), state (`d_state`) and conv window
 * (`d_conv`) from the shape's extras with each architecture's defaults; d_inner as the architecture sets it.
 */

import type { ModelShape } from '../arch-plan.js';
import { extra, type MetadataEntry, u32 } from '../arch-spec.js';

/** One architecture's Mamba-2 sizes. */
export interface Mamba2SpecDims {
  readonly inner: number; // d_inner
  readonly dState: number;
  readonly nGroup: number;
  readonly nHeads: number;
  readonly dConv: number;
  readonly conv: number; // conv channels: d_inner + 2·n_group·d_state
  readonly proj: number; // ssm_in rows: z | xBC | dt
}

/** The sizes of `s`, with d_inner from `inner(nHeads)` and the architecture's default state and group count. */
export function mamba2Dims(
  s: ModelShape,
  defaults: { readonly dState: number; readonly nGroup: number },
  inner: (nHeads: number) => number,
): Mamba2SpecDims {
  const nHeads = extra(s, 'ssm_heads', 8);
  const dState = extra(s, 'd_state', defaults.dState);
  const nGroup = extra(s, 'n_group', defaults.nGroup);
  const d = inner(nHeads);
  const conv = d + 2 * nGroup * dState;
  return { inner: d, dState, nGroup, nHeads, dConv: extra(s, 'd_conv', 4), conv, proj: d + conv + nHeads };
}

/** The `<arch>.ssm.*` keys of `d`, in llama.cpp's converter order. */
export function mamba2Metadata(arch: string, d: Mamba2SpecDims): Record<string, MetadataEntry> {
  return {
    [`${arch}.ssm.conv_kernel`]: u32(d.dConv),
    [`${arch}.ssm.inner_size`]: u32(d.inner),
    [`${arch}.ssm.state_size`]: u32(d.dState),
    [`${arch}.ssm.time_step_rank`]: u32(d.nHeads),
    [`${arch}.ssm.group_count`]: u32(d.nGroup),
  };
}
