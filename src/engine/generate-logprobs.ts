/**
 * Log-probabilities of generated tokens, as OpenAI returns them: the log-softmax of the model's raw logits at each
 * generated position (before logit bias, penalties, temperature and truncation — as llama.cpp's server reports
 * `n_probs` with `post_sampling_probs: false`), the chosen token's value plus the `top` most likely alternatives,
 * sorted by log-probability descending (ties: lower id first).
 */

/** One alternative at a position. */
interface TokenLogprob {
  readonly id: number;
  readonly logprob: number;
}

/** The log-probabilities at one generated position. */
export interface PositionLogprobs {
  /** The chosen token. */
  readonly id: number;
  readonly logprob: number;
  /** The `top` most likely tokens, most likely first. */
  readonly top: readonly TokenLogprob[];
}

/** log-softmax of `row` for the token `id` and the `top` most likely tokens (f64 accumulation). */
export function positionLogprobs(row: Float32Array, id: number, top: number): PositionLogprobs {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i] > max) max = row[i];
  let sum = 0;
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (!Number.isNaN(v)) sum += Math.exp(v - max);
  }
  const lse = max + Math.log(sum);
  const lp = (i: number): number => (Number.isNaN(row[i]) ? -Infinity : row[i] - lse);
  const best: number[] = [];
  if (top > 0) {
    // Keep the `top` best ids in a small sorted array (top ≤ 20).
    for (let i = 0; i < row.length; i++) {
      const v = Number.isNaN(row[i]) ? -Infinity : row[i];
      if (best.length === top && v <= row[best[best.length - 1]]) continue;
      let j = best.length;
      while (j > 0 && row[best[j - 1]] < v) j--;
      best.splice(j, 0, i);
      if (best.length > top) best.pop();
    }
  }
  return { id, logprob: lp(id), top: best.map((i) => ({ id: i, logprob: lp(i) })) };
}
