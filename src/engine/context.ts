/**
 * The inference context: a `Transformer` with its KV cache of `nSlots` sequences × `contextLength` cells, the
 * slot bookkeeping, the prompt cache and the timers. `decode` runs a batch — segments of tokens with positions,
 * sequence ids (slots) and which logits are wanted — chunked by the transformer's ubatch size. `warmup` does
 * llama.cpp's BOS(+EOS) decode and then forgets it.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import type { LogitsWanted, SequenceToken, Transformer } from '../model/model.js';
import { KvCache } from './kv-cache.js';
import { PromptCache, type PromptCacheStats } from './prompt-cache.js';

/** One contiguous run of a batch: `tokens` at positions startPos … of sequence `slot`. */
export interface BatchSegment {
  readonly slot: number;
  readonly startPos: number;
  readonly tokens: readonly number[];
  /** Which logits to keep readable: 'last' for the token to sample from, 'none' for pure prefill. */
  readonly logits: LogitsWanted;
}

/** Options of a context. */
export interface ContextOptions {
  /** Cells per slot; must match the transformer's KV cache. */
  readonly contextLength: number;
  /** Independent sequences; must match the transformer's KV cache. */
  readonly nSlots: number;
  /** Most tokens handed to the transformer per call (it splits them further by its ubatch size); default 512. */
  readonly batchSize?: number;
  /** Prompt-cache token budget (default: every cell of every slot). */
  readonly cacheTokenBudget?: number;
  /**
   * Pipelined greedy decode where the transformer can chain tokens on the backend (`pipelined-decode.ts`; default
   * true): false decodes one step after the other, each token read back before the next step is recorded.
   */
  readonly pipelinedDecode?: boolean;
}

/** Cumulative timing counters (reset by warmup and `resetTimers`). */
export interface ContextTimers {
  prefillTokens: number;
  prefillMs: number;
  decodeTokens: number;
  decodeMs: number;
}

/** Monotonic milliseconds. */
export function nowMs(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}

/**
 * The error for all-zero warmup logits: on WebGPU the sign of kernels that did not run (`feature-missing`, so 'auto'
 * falls back); on the CPU/WASM backends, whose kernels always run, the model itself yields nothing (zero output
 * weights or norms): `gguf-invalid`.
 */
function allZeroWarmup(backend: string): LlmError {
  if (backend !== 'webgpu') {
    return new LlmError(
      'gguf-invalid',
      `the model produces all-zero logits: warmup on the ${backend} backend gave 0 for every token; its output weights or norms are ` +
        'zero — the model file is broken, re-convert or re-download it',
      { details: { backend } },
    );
  }
  return new LlmError(
    'feature-missing',
    `warmup on the ${backend} backend produced all-zero logits (its kernels did not run); try another backend`,
    {
      details: { backend },
    },
  );
}

/**
 * The error for a non-finite warmup logit. The CPU and WASM backends compute in plain f32/f64 as llama.cpp's CPU path
 * does, so a NaN or ±Inf there comes from the model (NaN/Inf weights, or values that overflow): `gguf-invalid`. On
 * WebGPU it may also be the backend, so that stays `feature-missing` (and `backend: 'auto'` retries on WASM, which
 * then tells the two apart).
 */
function nonFiniteWarmup(backend: string, value: number, token: number): LlmError {
  if (backend !== 'webgpu') {
    return new LlmError(
      'gguf-invalid',
      `the model produces non-finite output: warmup on the ${backend} backend gave a logit of ${value} at token ${token}; its weights or ` +
        'hyper-parameters hold NaN/Inf or values that overflow — the model file is broken, re-convert or re-download it',
      { details: { backend, token, value: String(value) } },
    );
  }
  return new LlmError(
    'feature-missing',
    `warmup on the ${backend} backend produced a non-finite logit (${value} at token ${token}): either this backend cannot run this model ` +
      "here or the model's weights are broken — the wasm backend tells the two apart",
    { details: { backend, token } },
  );
}

/** A transformer plus its per-sequence state. */
export class Context {
  readonly transformer: Transformer;
  readonly contextLength: number;
  readonly nSlots: number;
  readonly batchSize: number;
  readonly kv: KvCache;
  readonly cache: PromptCache;
  readonly timers: ContextTimers = { prefillTokens: 0, prefillMs: 0, decodeTokens: 0, decodeMs: 0 };
  /** Pipelined greedy decode is on and the transformer can chain tokens (see ContextOptions.pipelinedDecode). */
  readonly pipelinedDecode: boolean;
  /** [1] token id: reused for every one-token decode step, so the decode loop allocates no id buffer per token. */
  private readonly oneToken = new Int32Array(1);

  constructor(transformer: Transformer, options: ContextOptions) {
    this.transformer = transformer;
    this.contextLength = options.contextLength;
    this.nSlots = options.nSlots;
    this.batchSize = Math.max(1, options.batchSize ?? 512);
    this.kv = new KvCache(options.nSlots, options.contextLength);
    this.pipelinedDecode = options.pipelinedDecode !== false && transformer.canChainTokens === true;
    const states = transformer.hasRecurrentState
      ? { read: (slot: number) => transformer.readState(slot), write: transformer.writeState.bind(transformer) }
      : null;
    this.cache = new PromptCache(
      this.kv,
      (src, dst, n) => transformer.copySlot(src, dst, n),
      options.cacheTokenBudget,
      states,
    );
  }

  /** Tokens per step of the transformer. */
  get ubatchSize(): number {
    return this.transformer.ubatchSize;
  }

  /**
   * Runs the segments in order, each in pieces of at most `batchSize` tokens (only the last piece keeps logits).
   * The caller records a segment's KV only once this resolves (an aborted segment leaves the record unchanged).
   * `kind` picks the timer.
   */
  async decode(segments: readonly BatchSegment[], kind: 'prefill' | 'decode', signal?: AbortSignal): Promise<void> {
    for (const seg of segments) {
      throwIfAborted(signal, kind);
      if (seg.tokens.length === 0) continue;
      const end = seg.startPos + seg.tokens.length;
      if (end > this.contextLength) {
        throw new LlmError(
          'context-overflow',
          `${kind}: positions ${seg.startPos}…${end - 1} exceed the context length ${this.contextLength}; shorten the input or load with a larger contextLength`,
          {
            details: { startPos: seg.startPos, nTokens: seg.tokens.length, contextLength: this.contextLength },
          },
        );
      }
      const t0 = nowMs();
      this.cache.beginWrite(seg.slot); // a recurrent state is unknown until the caller records what was written
      let tokens: Int32Array; // [n] token ids
      if (seg.tokens.length === 1) {
        this.oneToken[0] = seg.tokens[0]!;
        tokens = this.oneToken;
      } else {
        tokens = Int32Array.from(seg.tokens);
      }
      for (let at = 0; at < tokens.length; at += this.batchSize) {
        if (at > 0) throwIfAborted(signal, kind);
        const piece = tokens.subarray(at, at + this.batchSize);
        const isLast = at + piece.length === tokens.length;
        await this.transformer.eval(piece, seg.startPos + at, seg.slot, {
          logits: isLast ? seg.logits : 'none',
          signal,
        });
      }
      const ms = nowMs() - t0;
      if (kind === 'prefill') {
        this.timers.prefillTokens += seg.tokens.length;
        this.timers.prefillMs += ms;
      } else {
        this.timers.decodeTokens += seg.tokens.length;
        this.timers.decodeMs += ms;
      }
    }
  }

  /**
   * One decode step of several sequences together (`Transformer.evalRows`: one token per slot, every row's logits
   * kept); counted as `rows.length` decoded tokens.
   */
  async decodeRows(rows: readonly SequenceToken[], signal?: AbortSignal): Promise<void> {
    throwIfAborted(signal, 'decode');
    const t0 = nowMs();
    for (const r of rows) this.cache.beginWrite(r.slot); // each row advances its slot's recurrent state
    await this.transformer.evalRows(rows, signal);
    this.timers.decodeTokens += rows.length;
    this.timers.decodeMs += nowMs() - t0;
  }

  /**
   * One decode step of the token the last `Transformer.argmaxToInput` left on the backend, at `pos` of `slot`
   * (pipelined decode). The caller counts it as a decoded token (`timers.decodeTokens`) and records it in the prompt
   * cache only once the token is taken (a discarded speculative step is neither).
   */
  async decodeChained(slot: number, pos: number, signal?: AbortSignal): Promise<void> {
    throwIfAborted(signal, 'decode');
    const t0 = nowMs();
    this.cache.beginWrite(slot);
    await this.transformer.evalChained!(pos, slot, signal);
    this.timers.decodeMs += nowMs() - t0;
  }

  /**
   * llama.cpp's warmup: decodes BOS (+EOS) in slot 0 so that pipelines compile (first asynchronously where the
   * transformer can: `prepareKernels`) and buffers are touched, then clears
   * the KV record and the timers. `tokens` are the vocab's BOS/EOS ids (0 when it has neither). The logits are read
   * back once and must be finite and not all zero — a backend whose kernels silently failed (an invalid GPU
   * pipeline writes nothing) is refused here with `feature-missing`, so `backend: 'auto'` can fall back; non-finite or
   * all-zero logits on the CPU/WASM backends come from the model and are `gguf-invalid` (`nonFiniteWarmup`,
   * `allZeroWarmup`).
   */
  async warmup(tokens: readonly number[], signal?: AbortSignal): Promise<void> {
    const ids = tokens.length > 0 ? tokens.slice(0, 2) : [0];
    await this.transformer.prepareKernels?.(Int32Array.from(ids), signal); // WebGPU: pipelines compiled asynchronously
    await this.transformer.eval(Int32Array.from(ids), 0, 0, { logits: 'last', signal });
    const logits = await this.transformer.readLogits(); // [vocabSize]
    let nonZero = false;
    for (let i = 0; i < logits.length; i++) {
      const v = logits[i];
      if (!Number.isFinite(v)) throw nonFiniteWarmup(this.transformer.ops.name, v, i);
      if (v !== 0) nonZero = true;
    }
    if (!nonZero && logits.length > 1) throw allZeroWarmup(this.transformer.ops.name);
    this.cache.clear(true);
    this.resetTimers();
  }

  /** Zeroes the timing counters. */
  resetTimers(): void {
    this.timers.prefillTokens = 0;
    this.timers.prefillMs = 0;
    this.timers.decodeTokens = 0;
    this.timers.decodeMs = 0;
  }

  /** Prompt-cache counters. */
  cacheStats(): PromptCacheStats {
    return this.cache.stats();
  }
}
