/**
 * The bench's greedy decode steps, run as the engine's greedy loop runs them: chained on the device where the model
 * can (`canChainTokens`: step N+1 submitted before token N is read back, engine/pipelined-decode.ts), else one
 * `eval` + `argmax` per token. Chained steps start from the argmax of the last evaluated logits (the prompt's).
 */

import type { TransformerModel } from '../../src/model/transformer.js';

/** Per-step wall ms (between successive tokens in hand) and the last token. */
interface GreedySteps {
  readonly steps: number[];
  readonly last: number;
}

/** Decodes `n` greedy steps in slot 0 from `startPos`, `first` being the token the last logits chose. */
export async function greedyDecode(
  model: TransformerModel,
  first: number,
  startPos: number,
  n: number,
): Promise<GreedySteps> {
  const steps: number[] = [];
  let tok = first;
  let t = performance.now();
  if (!model.canChainTokens) {
    for (let i = 0; i < n; i++) {
      await model.eval(Int32Array.of(tok), startPos + i, 0);
      tok = await model.argmax();
      const now = performance.now();
      steps.push(now - t);
      t = now;
    }
    return { steps, last: tok };
  }
  let pending = model.argmaxToInput(); // `first` again, now left in the device's token input
  for (let i = 0; i < n; i++) {
    await model.evalChained(startPos + i, 0);
    const next = model.argmaxToInput(); // this step's token, submitted with it
    await pending;
    pending = next;
    if (i > 0) {
      const now = performance.now();
      steps.push(now - t);
      t = now;
    }
  }
  if (n > 0) tok = await pending;
  steps.push(performance.now() - t);
  return { steps, last: tok };
}
