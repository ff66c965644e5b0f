/**
 * Greedy decode steps after a prompt, counting the backend's queue submissions per step (WebGPU tests and the
 * GPU-machine check assert one submission per token). Only the steps: the caller evaluates the prompt, so it can
 * start its clocks and counters in between.
 */

import type { Transformer } from '../../src/model/model.js';

/** What the steps produced: the tokens picked (after `first`) and each step's submission count. */
export interface GreedySteps {
  readonly tokens: number[];
  readonly submissionsPerStep: number[];
}

/** Runs `n` greedy steps from token `first` at position `startPos`; `stats.submissions` counts queue submissions. */
export async function greedySteps(
  model: Pick<Transformer, 'eval' | 'argmax'>,
  stats: { readonly submissions: number },
  first: number,
  startPos: number,
  n: number,
): Promise<GreedySteps> {
  const tokens: number[] = [];
  const submissionsPerStep: number[] = [];
  let tok = first;
  for (let i = 0; i < n; i++) {
    const s0 = stats.submissions;
    await model.eval(Int32Array.of(tok), startPos + i, 0);
    tok = await model.argmax();
    submissionsPerStep.push(stats.submissions - s0);
    tokens.push(tok);
  }
  return { tokens, submissionsPerStep };
}
