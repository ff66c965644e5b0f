/**
 * gpt-oss's clamped SwiGLU (ggml `swiglu_oai`, llama.cpp `LLM_FFN_SWIGLU_OAI_MOE`) on a host backend: the gate is
 * clamped above and the up projection on both sides at `SWIGLU_OAI_LIMIT`, then x·σ(α·x)·(y + 1).
 */

import type { HostView } from './delta-net.js';
import type { Activation } from './ops.js';

/** α of the sigmoid (llama.cpp's constant for gpt-oss). */
const SWIGLU_OAI_ALPHA = 1.702;
/** Clamp of gate (above) and up (both sides). */
const SWIGLU_OAI_LIMIT = 7;

/** out = min(g, 7)·σ(1.702·min(g, 7))·(clamp(u, −7, 7) + 1) over n rows of out.cols values. */
export function hostSwigluOai(view: HostView, out: Activation, gate: Activation, up: Activation, n: number): void {
  const [[od, oAt], [gd, gAt], [ud, uAt]] = [view(out), view(gate), view(up)];
  const len = n * out.cols;
  for (let i = 0; i < len; i++) {
    const x = Math.min(gd[gAt + i], SWIGLU_OAI_LIMIT);
    const y = Math.min(Math.max(ud[uAt + i], -SWIGLU_OAI_LIMIT), SWIGLU_OAI_LIMIT);
    od[oAt + i] = (x / (1 + Math.exp(-SWIGLU_OAI_ALPHA * x))) * (y + 1);
  }
}
