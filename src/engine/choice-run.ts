/**
 * One choice of a generation: its sampler (seeded per choice), token history, grammar constraint, UTF-8 stream
 * decoder and stop matcher, and what it has produced so far. The generation loop (`generate.ts`) steps every live
 * choice once per forward pass; `take` handles one sampled token and says whether the choice goes on.
 */

import type { StreamDecoder } from '../tokenizer/tokenizer.js';
import { positionLogprobs, type PositionLogprobs } from './generate-logprobs.js';
import type { LogitSource, Sampler } from './sampler.js';
import { StopMatcher } from './stop.js';
import type { GenerationInput, TokenConstraint } from './generate.js';

/** Why a choice ended (OpenAI `finish_reason`). */
export type FinishReason = 'stop' | 'length';

/** The seed of choice `index`: `seed + index` (choice 0 draws exactly what a one-choice request draws). */
export function choiceSeed(seed: number, index: number): number {
  return seed + index <= Number.MAX_SAFE_INTEGER ? seed + index : seed - index;
}

/** The state of one choice between steps. */
export class ChoiceRun {
  readonly history: number[];
  readonly generated: number[] = [];
  readonly logprobs: PositionLogprobs[] = [];
  text = '';
  finishReason: FinishReason = 'length';
  /** False once the choice has ended. */
  live = true;
  /** Positions dropped by context shifts so far (the next token's position is history length − 1 − this). */
  private discarded = 0;
  private readonly stopper: StopMatcher;

  constructor(
    readonly index: number,
    private readonly input: GenerationInput,
    private readonly sampler: Sampler,
    private readonly decoder: StreamDecoder,
    readonly constraint: TokenConstraint | undefined,
  ) {
    this.history = input.prompt.slice();
    this.stopper = new StopMatcher(input.stop);
  }

  get route(): Sampler['route'] {
    return this.sampler.route;
  }

  /**
   * Samples this choice's next token from `source` (its row of the last step), under its grammar. With a grammar the
   * logit row is asked for first — on WebGPU that submits the step's forward pass — and the grammar's token mask is
   * computed while it runs (a constrained request always reads the full row, so the read is never wasted).
   */
  async sample(source: LogitSource): Promise<number> {
    if (!this.constraint) return this.sampler.sample(source, this.history);
    const row = source.readLogits();
    row.catch(() => {}); // a failure is reported below, once the mask is known
    const mask = await this.constraint.nextMask();
    return this.sampler.sample({ ...source, readLogits: () => row }, this.history, mask ?? undefined);
  }

  /**
   * Takes a sampled token: ends the choice on an end-of-generation token, a stop string, a finished or refused
   * grammar, `maxTokens` or a full context; returns the text that became safe to show ('' when none).
   */
  take(token: number, contextLength: number): string {
    const input = this.input;
    if (input.eogIds.has(token)) return this.end('stop');
    let lp: PositionLogprobs | null = null;
    if (input.logprobs !== undefined && this.sampler.lastRow) {
      lp = positionLogprobs(this.sampler.lastRow, token, input.logprobs);
      this.logprobs.push(lp);
    }
    input.onToken?.(token, lp, this.index);
    const accepted = this.constraint ? this.constraint.accept(token) : true;
    this.generated.push(token);
    this.history.push(token);
    const marker = input.visibleTokens?.get(token);
    const r = this.stopper.push(marker !== undefined ? this.decoder.flush() + marker : this.decoder.push(token));
    this.text += r.text;
    if (r.stopped || !accepted || (this.constraint?.isTerminated() ?? false)) return r.text + this.end('stop');
    // The token would be evaluated at `pos`. Prompt + output never exceed the context: once they fill it, the
    // answer ends with 'length' (so usage.total_tokens ≤ contextLength, whatever max_tokens asked for) — unless the
    // request shifts the context (the loop then makes room; without max_tokens at most a context's worth is made).
    const pos = this.lastPos;
    const shifts = input.contextShift !== undefined;
    if (this.generated.length >= this.tokenCap(contextLength) || (!shifts && pos + 1 >= contextLength))
      return r.text + this.end('length');
    return r.text;
  }

  /** Most tokens this choice generates: `maxTokens`, or a context's worth when it shifts without a limit. */
  tokenCap(contextLength: number): number {
    const input = this.input;
    return input.contextShift !== undefined && !Number.isFinite(input.maxTokens) ? contextLength : input.maxTokens;
  }

  /** Position the last taken token is evaluated at. */
  get lastPos(): number {
    return this.history.length - 1 - this.discarded;
  }

  /** The request's context shift, if it asked for one. */
  get contextShift(): GenerationInput['contextShift'] {
    return this.input.contextShift;
  }

  /** True once a context shift happened (the slot's later cells are then not recorded in the prompt cache). */
  get isShifted(): boolean {
    return this.discarded > 0;
  }

  /** Records a context shift of `nDiscard` positions. */
  shifted(nDiscard: number): void {
    this.discarded += nDiscard;
  }

  /** Ends the choice with 'length' because its context is full and cannot shift; returns the held-back text. */
  cutAtContext(): string {
    return this.end('length');
  }

  /** Ends the choice; returns the text held back until now (a partial character, a possible stop-string start). */
  private end(reason: FinishReason): string {
    this.live = false;
    this.finishReason = reason;
    const rest = this.stopper.push(this.decoder.flush());
    const tail = rest.text + (rest.stopped ? '' : this.stopper.flush());
    this.text += tail;
    return tail;
  }
}
