/**
 * Engine state sweep helpers (issues 15, 16, 17, 20): a warm engine that keeps state between requests (prompt
 * cache, recurrent snapshots, shifted slots, quantized KV, persisted prefixes, n > 1 choices) against a cold engine
 * that runs each request's whole token sequence from an emptied cache. Greedy text must be equal and every token's
 * logprob within float noise.
 */

import { join } from 'node:path';
import { expect } from 'vitest';
import { createEngine } from '../../src/api/create-engine.js';
import type { BackendChoice, Engine, EngineOptions } from '../../src/api/engine.js';
import type { LocalEngine } from '../../src/api/local-engine.js';
import type { ChatCompletionRequest, ChatRequestMessage, CompletionRequest } from '../../src/api/types.js';
import { RECORDED_FIXTURE_DIR, sharedPath } from './shared-path.js';

/** One model of a family the sweep drives. */
export interface SweepModel {
  readonly family: 'dense' | 'swa' | 'hybrid' | 'moe' | 'mrope';
  readonly name: string;
  readonly path: string;
}

const recorded = (id: string): string => join(RECORDED_FIXTURE_DIR, `${id}.gguf`);

/** Every family of the sweep: dense, sliding-window, hybrid recurrent, MoE and M-RoPE (text only). */
export const SWEEP_MODELS: readonly SweepModel[] = [
  { family: 'dense', name: 'llama3', path: sharedPath('models', 'arch', 'llama3-f16.gguf') },
  { family: 'dense', name: 'qwen3', path: sharedPath('models', 'arch', 'qwen3-q8_0.gguf') },
  { family: 'swa', name: 'gemma2', path: sharedPath('models', 'arch', 'gemma2-q8_0.gguf') },
  { family: 'swa', name: 'gemma3', path: sharedPath('models', 'arch', 'gemma3-f16.gguf') },
  { family: 'hybrid', name: 'lfm2', path: recorded('lfm2-q8_0-s1') },
  { family: 'hybrid', name: 'qwen35', path: recorded('qwen35-q8_0-s1') },
  { family: 'hybrid', name: 'granitehybrid', path: recorded('granitehybrid-q8_0-s1') },
  { family: 'hybrid', name: 'falcon-h1', path: recorded('falcon-h1-q8_0-s1') },
  { family: 'moe', name: 'qwen3moe', path: recorded('qwen3moe-q8_0-s2') },
  { family: 'mrope', name: 'qwen2vl', path: recorded('qwen2vl-q8_0-s1') },
];

/** What one request gave: its text, each generated token's logprob, why it ended and the cached prompt tokens. */
export interface SweepResult {
  readonly text: string;
  readonly logprobs: readonly number[];
  readonly finish: string;
  readonly cached: number;
}

/** `n` prompt-safe token ids (no BOS/EOS/control ids at the bottom of the vocab), varied by `from`. */
export function sweepIds(from: number, n: number, vocab: number): number[] {
  const span = Math.min(vocab, 600) - 8;
  return Array.from({ length: n }, (_, i) => 8 + ((from * 31 + i * 7) % span));
}

/** A warm engine under test and a cold one (same options) whose cache is emptied before each request. */
export interface EnginePair {
  readonly warm: LocalEngine;
  readonly cold: LocalEngine;
  readonly vocab: number;
  close(): Promise<void>;
}

/** Opens `model` twice with the same options. */
export async function openPair(model: SweepModel, options: Partial<EngineOptions>): Promise<EnginePair> {
  const opts: EngineOptions = { model: model.path, contextLength: 128, slots: 2, warmup: false, ...options };
  const warm = (await createEngine(opts)) as LocalEngine;
  const cold = (await createEngine({ ...opts, persistedCache: false })) as LocalEngine;
  return {
    warm,
    cold,
    vocab: warm.info.model.vocabSize,
    close: async () => {
      await warm.unload();
      await cold.unload();
    },
  };
}

/** Greedy defaults of a sweep request. */
const GREEDY = { temperature: 0, max_tokens: 6, logprobs: 1 } as const;

/** Runs one text completion (token ids) and flattens what the comparison needs. */
export async function complete(
  engine: Engine,
  prompt: readonly number[],
  extra: Partial<CompletionRequest> = {},
): Promise<SweepResult> {
  const r = await engine.completions.create({ prompt, ...GREEDY, ...extra, stream: false });
  const c = r.choices[0]!;
  return {
    text: c.text,
    logprobs: c.logprobs?.token_logprobs ?? [],
    finish: c.finish_reason,
    cached: r.usage.prompt_tokens_details.cached_tokens,
  };
}

/** The same request on the cold engine with nothing cached: what the warm answer must equal. */
export async function coldRun(
  pair: EnginePair,
  prompt: readonly number[],
  extra: Partial<CompletionRequest> = {},
): Promise<SweepResult> {
  await pair.cold.settled();
  pair.cold.context.cache.clear();
  const r = await complete(pair.cold, prompt, extra);
  expect(r.cached).toBe(0);
  return r;
}

/** Float noise allowed between a reused prefix and a cold prefill (batch split differs). */
const LOGPROB_TOLERANCE = 2e-3;

/** Warm equals cold: same text and finish reason, logprobs within float noise. */
export function expectSame(warm: SweepResult, cold: SweepResult, what: string): void {
  expect(warm.text, `${what}: text`).toBe(cold.text);
  expect(warm.finish, `${what}: finish`).toBe(cold.finish);
  expect(warm.logprobs.length, `${what}: tokens`).toBe(cold.logprobs.length);
  for (let i = 0; i < cold.logprobs.length; i++) {
    expect(Math.abs(warm.logprobs[i]! - cold.logprobs[i]!), `${what}: logprob ${i}`).toBeLessThan(LOGPROB_TOLERANCE);
  }
}

/** Checks the warm request against the cold one and returns the warm result. */
export async function checked(
  pair: EnginePair,
  prompt: readonly number[],
  what: string,
  extra: Partial<CompletionRequest> = {},
): Promise<SweepResult> {
  const warm = await complete(pair.warm, prompt, extra);
  expectSame(warm, await coldRun(pair, prompt, extra), what);
  return warm;
}

/** Token ids of generated text, to build the next turn's prompt (no BOS). */
export function idsOf(engine: Engine, text: string): Promise<number[]> {
  return engine.tokenize(text, { addSpecial: false, parseSpecial: false });
}

/** A chat request's answer flattened as `SweepResult` (logprobs of the chosen tokens). */
export async function chatComplete(
  engine: Engine,
  messages: readonly ChatRequestMessage[],
  extra: Partial<ChatCompletionRequest> = {},
): Promise<SweepResult> {
  const r = await engine.chat.completions.create({
    messages,
    ...GREEDY,
    logprobs: true,
    ...extra,
    stream: false,
  });
  const c = r.choices[0]!;
  return {
    text: c.message.content,
    logprobs: c.logprobs?.content?.map((t) => t.logprob) ?? [],
    finish: c.finish_reason,
    cached: r.usage.prompt_tokens_details.cached_tokens,
  };
}

/** A chat request on the warm engine checked against the cold engine with nothing cached. */
export async function chatChecked(
  pair: EnginePair,
  messages: readonly ChatRequestMessage[],
  what: string,
  extra: Partial<ChatCompletionRequest> = {},
): Promise<SweepResult> {
  const warm = await chatComplete(pair.warm, messages, extra);
  await pair.cold.settled();
  pair.cold.context.cache.clear();
  const cold = await chatComplete(pair.cold, messages, extra);
  expect(cold.cached).toBe(0);
  expectSame(warm, cold, what);
  return warm;
}

/** SWEEP_ENGINE_FULL=1: every model, both backends and the exhaustive variants. */
export const SWEEP_FULL = process.env['SWEEP_ENGINE_FULL'] === '1';
/** Backends to sweep: SWEEP_ENGINE_BACKENDS (comma-separated), else wasm (cpu too with SWEEP_ENGINE_FULL=1). */
export const SWEEP_BACKENDS = (process.env['SWEEP_ENGINE_BACKENDS'] ?? (SWEEP_FULL ? 'cpu,wasm' : 'wasm')).split(
  ',',
) as BackendChoice[];

/** Aborts `ac` when the transformer's `eval`/`evalRows` is entered for the `at`-th time (1-based); returns the undo. */
export function abortOnEval(pair: EnginePair, ac: AbortController, at: number): () => void {
  const t = pair.warm.context.transformer as unknown as Record<'eval' | 'evalRows', (...a: unknown[]) => unknown>;
  const orig = { eval: t.eval, evalRows: t.evalRows };
  let calls = 0;
  for (const k of ['eval', 'evalRows'] as const) {
    t[k] = (...a: unknown[]) => {
      if (++calls === at) ac.abort(new Error('sweep abort'));
      return orig[k].apply(t, a);
    };
  }
  return () => Object.assign(t, orig);
}
