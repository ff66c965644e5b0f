/**
 * Pipelined greedy decode of one choice (WebGPU): the argmax of step N is written on the device into the token input
 * step N+1's `embed` reads (`Transformer.argmaxToInput`), so step N+1 is recorded and submitted before step N's token
 * is read back; the host still reads every token to stream it and to check the stop conditions. When token N ends
 * the choice (end-of-generation, a stop string, `maxTokens`) the speculative step N+1 is discarded: its token is
 * never taken and its KV cell (one past what the prompt cache records for the slot) is never served, since the cache
 * records a token only once it is taken. A step is speculated only where the unpipelined loop would evaluate one
 * without a context shift or a cut, so the tokens, the KV bookkeeping and the prompt cache match it exactly.
 *
 * Models with recurrent state (conv / SSM / delta-rule state updated in place on the device) pipeline too. A
 * speculative step is never a wrong step: it evaluates the token the previous argmax chose, which the choice takes
 * whatever follows, only perhaps one the unpipelined loop would not have evaluated (the last one). So nothing is
 * checkpointed or rolled back: once the token is taken, the step is recorded in the prompt cache at once — before
 * its text is yielded, the stop check and the abort check — and the slot's state, KV and record then describe the
 * same tokens (one more than the unpipelined loop records when the choice ends or is aborted). Until then the state
 * is marked unknown (`Context.decodeChained`), so a step that fails or never completes is never served.
 *
 * Used only where the token is chosen on the device: one choice, the argmax route (greedy, no logit bias, no
 * penalties), no grammar, no log-probabilities, a backend with a device-side token input
 * (`Transformer.canChainTokens`). Seeded (top-k) and full-row sampling, grammars, log-probabilities and n > 1 run
 * the unpipelined loop.
 */

import { throwIfAborted } from '../errors.js';
import type { ChoiceRun } from './choice-run.js';
import { type Context, nowMs } from './context.js';
import type { LogitSource } from './sampler.js';
import type { SlotLease } from './prompt-cache.js';

/** Timings the generation loop shares with the pipelined part. */
export interface DecodeClock {
  /** Start of the request (ms). */
  readonly t0: number;
  /** Time to the first sampled token (0 until known). */
  ttft: number;
  /** Time spent recording decode steps. */
  decodeMs: number;
}

/** True when `run` may decode pipelined on `ctx` (see the file header). */
export function canPipeline(ctx: Context, runs: readonly ChoiceRun[], fullRow: boolean): boolean {
  const run = runs[0];
  return (
    ctx.pipelinedDecode &&
    runs.length === 1 &&
    run !== undefined &&
    !fullRow &&
    run.constraint === undefined &&
    run.route === 'argmax' &&
    ctx.transformer.argmaxToInput !== undefined &&
    ctx.transformer.evalChained !== undefined
  );
}

/** A source whose argmax is a token already asked of the device. */
function pendingSource(pending: Promise<number>, rest: LogitSource): LogitSource {
  return { readLogits: () => rest.readLogits(), argmax: () => pending, topK: (k) => rest.topK(k) };
}

/**
 * Decodes `run` pipelined from the logits of its last evaluated step (the prompt's) while it can; yields text deltas
 * and returns null when the choice ended, else the source of its next token (a pending device argmax) for the
 * unpipelined loop to go on from (near the end of the context, or for the last token `maxTokens` allows).
 */
export async function* pipelinedDecode(
  ctx: Context,
  run: ChoiceRun,
  lease: SlotLease,
  clock: DecodeClock,
  signal: AbortSignal | undefined,
  fallback: LogitSource,
): AsyncGenerator<string, LogitSource | null, void> {
  const t = ctx.transformer;
  const recurrent = t.hasRecurrentState;
  let pending = t.argmaxToInput!(); // the token of the last evaluated step, left in the device's token input
  pending.catch(() => {}); // awaited below; an abort before that leaves it to settle unobserved
  for (;;) {
    throwIfAborted(signal, 'generation');
    // The pending token, once taken, is evaluated at `pos`; speculate only where the unpipelined loop would then
    // evaluate it (no context shift, no cut at the context's end) and it is not the last token allowed.
    const pos = run.lastPos + 1;
    const canSpeculate = pos + 1 < ctx.contextLength && run.generated.length + 1 < run.tokenCap(ctx.contextLength);
    if (!canSpeculate) return pendingSource(pending, fallback);
    const td = nowMs();
    await ctx.decodeChained(lease.slot, pos, signal);
    const next = t.argmaxToInput!(); // submits step `pos` and its argmax in one command buffer
    next.catch(() => {}); // a discarded step's failure is nobody's: the taken tokens' reads report their own
    clock.decodeMs += nowMs() - td;
    const token = await pending;
    if (clock.ttft === 0) clock.ttft = nowMs() - clock.t0;
    const text = run.take(token, ctx.contextLength);
    // Recurrent state: step `pos` advanced it by this taken token; recorded now, the record matches the state.
    if (recurrent) ctx.cache.append(lease, [token]);
    if (text) yield text;
    if (!run.live) return null; // step `pos` is discarded (a recurrent one kept: recorded above)
    throwIfAborted(signal, 'decode'); // where the unpipelined loop checks, before it would evaluate the token
    if (!recurrent) ctx.cache.append(lease, [token]); // the step at `pos` evaluated this token
    ctx.timers.decodeTokens++;
    pending = next;
  }
}
