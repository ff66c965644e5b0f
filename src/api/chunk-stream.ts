/**
 * A streamed response: the opening chunks, each choice's deltas (tagged with its index) as its text arrives, then
 * each choice's final chunks, the last of which carries the usage of all choices. Log-probabilities of the tokens
 * behind a text delta travel in that delta's chunk (the rest in the last); the reader's abort ends the stream at once.
 */

import { LlmError } from '../errors.js';
import type { GenerationInput, GenerationResult } from '../engine/generate.js';
import type { PositionLogprobs } from '../engine/generate-logprobs.js';
import { type ChunkMakers, usageOf } from './completion-response.js';
import type { PreparedRequest } from './prepared-request.js';
import { PushStream } from './push-stream.js';

/** Runs a request's choices: `onText` gets each safe text delta with its choice; `cancel` stops it. */
type ChoiceRunner = (
  onText: (text: string, index: number) => void,
  cancel: AbortSignal,
  onToken: GenerationInput['onToken'],
) => Promise<GenerationResult[]>;

/** Starts `run` and returns the stream of chunks `makers` builds from its text and results. */
export function streamChunks<T>(p: PreparedRequest, makers: ChunkMakers<T>, run: ChoiceRunner): AsyncIterable<T> {
  const cancel = new AbortController();
  const out = new PushStream<T>(() => cancel.abort(new LlmError('aborted', 'the stream was closed by its reader')));
  for (const c of makers.first) out.push(c);
  const onAbort = (): void => out.abort(new LlmError('aborted', 'request was aborted', { cause: p.signal?.reason }));
  p.signal?.addEventListener('abort', onAbort, { once: true });
  const wantLp = p.norm.logprobs !== undefined;
  const pending: PositionLogprobs[][] = Array.from({ length: p.norm.n }, () => []); // per choice
  const take = (i: number): PositionLogprobs[] | null => {
    if (!wantLp) return null;
    const lp = pending[i]!;
    pending[i] = [];
    return lp;
  };
  const onToken = wantLp
    ? (_id: number, lp: PositionLogprobs | null, i: number) => void (lp && pending[i]!.push(lp))
    : undefined;
  run(
    (t, i) => {
      for (const c of makers.delta(t, take(i), i)) out.push(c);
    },
    cancel.signal,
    onToken,
  )
    .then(
      (results) => {
        results.forEach((r, i) => {
          const usage = i === results.length - 1 ? usageOf(results) : null;
          for (const c of makers.final(r, take(i), i, usage)) out.push(c);
        });
        out.end();
      },
      (e: unknown) => out.fail(e),
    )
    .finally(() => p.signal?.removeEventListener('abort', onAbort));
  return out;
}
