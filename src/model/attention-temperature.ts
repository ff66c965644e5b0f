/**
 * llama 4's attention temperature (mistral3's `attention.temperature_scale`): q of the token at position p is
 * multiplied by 1 + s · ln(⌊p / n⌋ + 1) after rope, in f32 as llama.cpp (`llm_graph_input_attn_temp`). The value
 * changes only at multiples of n, so the forward pass cuts its steps there and scales each step's q once.
 */

import type { ModelConfig } from './config.js';

/** The temperature of q at position `pos`; 1 when the model has none. */
export function attentionTemperature(c: ModelConfig, pos: number): number {
  const t = c.attnTemperature;
  return t ? Math.fround(Math.log(Math.floor(pos / t.floor) + 1) * t.scale + 1) : 1;
}

/** Tokens from `pos` that share one temperature (Infinity when the model has none). */
export function temperatureRun(c: ModelConfig, pos: number): number {
  const t = c.attnTemperature;
  return t ? t.floor - (pos % t.floor) : Number.POSITIVE_INFINITY;
}
