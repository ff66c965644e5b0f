/**
 * The in-thread `Engine`: validates requests, renders and tokenizes prompts, queues requests FIFO, runs the
 * generation loop on the shared `Context` and shapes results as OpenAI chat/text completions (whole or streamed).
 * Built from already-loaded parts, so tests can drive it with fakes; `createEngine` does the loading.
 */

import type { ModelFacts } from './model-facts.js';
import { LlmError, isLlmError } from '../errors.js';
import { Context, nowMs } from '../engine/context.js';
import { generateChoices, type GenerationInput, type GenerationResult } from '../engine/generate.js';
import { PromptCache } from '../engine/prompt-cache.js';
import { PersistedPromptCache, type PersistedPromptCacheOptions } from '../engine/persisted-cache.js';
import { RequestQueue } from '../engine/request-queue.js';
import type { Transformer } from '../model/model.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import type { ChatFormatter } from './chat-formatter.js';
import type {
  BackendInfo,
  ChatCompletions,
  Completions,
  Engine,
  EngineInfo,
  EngineStats,
  TokenizeOptions,
} from './engine.js';
import { PushStream } from './push-stream.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatMessage,
  ChatToolCallDelta,
  Completion,
  CompletionChunk,
  CompletionRequest,
  CompletionUsage,
} from './types.js';
import { chatLogprobs, completionLogprobs } from './logprobs-format.js';
import type { PositionLogprobs } from '../engine/generate-logprobs.js';
import { parserVisibleMarkers, startsInsideReasoning, type ReasoningFormat } from '../output/reasoning-format.js';
import { detectToolCallFormat, TOOL_MARKERS, type ToolCallFormat } from '../tools/tool-call-format.js';
import { toolGrammar } from '../tools/tool-grammar.js';
import { withGenericToolPrompt } from '../tools/tool-prompt.js';
import { ChatAnswer, type AnswerShape } from './chat-answer.js';
import { GrammarEngine } from '../structured/grammar-engine.js';
import { normalizeChatRequest, normalizeCompletionRequest, type NormalizedRequest } from './validate-request.js';

/** Everything an engine runs on, already loaded. */
export interface EngineParts {
  readonly transformer: Transformer;
  readonly tokenizer: Tokenizer;
  readonly chat: ChatFormatter;
  /** sha256, etag + size, or file name + size. */
  readonly modelIdentity: string;
  /** Parameter count and quantization from the header (absent: reported as 0 and 'unknown'). */
  readonly modelFacts?: ModelFacts;
  readonly backend: BackendInfo;
  /** KV cells per slot the transformer was loaded with. */
  readonly contextLength: number;
  /** KV slots the transformer was loaded with. */
  readonly slots: number;
  readonly maxQueue?: number;
  /** Most prompt tokens per transformer call (default 512). */
  readonly batchSize?: number;
  readonly cacheTokenBudget?: number;
  readonly loadMs?: number;
  /** Run the warmup decode (default true). */
  readonly warmup?: boolean;
  /** Called once after the transformer is destroyed by `unload` (close the byte source …). */
  readonly onUnload?: () => void | Promise<void>;
  /** The persisted prompt cache (off when absent or false). */
  readonly persistedCache?: false | PersistedPromptCacheOptions;
  /** Context shift when the context fills (`EngineOptions.contextShift`; default: chat requests only). */
  readonly contextShift?: boolean;
}

/** Creates an engine over loaded parts, running the warmup decode unless disabled. */
export async function createEngineFromParts(parts: EngineParts, signal?: AbortSignal): Promise<Engine> {
  const engine = new LocalEngine(parts);
  if (parts.warmup !== false) await engine.warmup(signal);
  await engine.restoreCache();
  return engine;
}

let idCounter = 0;
function newId(prefix: string): string {
  idCounter = (idCounter + 1) % 1e9;
  return `${prefix}-${Date.now().toString(36)}${idCounter.toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/** A request ready to run: its prompt tokens, cache key and settings. */
interface PreparedRequest {
  readonly prompt: number[];
  readonly key: string;
  readonly norm: NormalizedRequest;
  readonly stop: readonly string[];
  readonly eogIds: ReadonlySet<number>;
  readonly signal: AbortSignal | undefined;
  /** Chat: how the output carries reasoning, and whether it starts inside the reasoning. */
  readonly reasoning?: { readonly format: ReasoningFormat; readonly startInside: boolean };
  readonly visibleTokens?: ReadonlyMap<number, string>;
  /** The compiled output constraint, if any (a matcher is made from it when the request runs). */
  readonly compiled?: CompiledGrammar;
  /** Tokens of the prompt's system-prompt prefix to persist after the request (0: none). */
  readonly persistPrefix?: number;
  /** A chat request (context shift is on by default for them). */
  readonly isChat?: boolean;
}

type CompiledGrammar = Awaited<ReturnType<GrammarEngine['compile']>>;

/** `Engine` running in the calling thread. */
export class LocalEngine implements Engine {
  readonly info: EngineInfo;
  readonly chat: { readonly completions: ChatCompletions };
  readonly completions: Completions;
  private readonly parts: EngineParts;
  private readonly ctx: Context;
  private readonly queue: RequestQueue;
  private readonly unloadController = new AbortController();
  private unloadPromise: Promise<void> | null = null;
  private warmupMs = 0;
  private requests = 0;
  private lastTtftMs = 0;
  private grammarEngine: GrammarEngine | null = null;
  private readonly persisted: PersistedPromptCache | null;
  /** System-prompt prefix lengths by system message text (bounded). */
  private readonly systemPrefixes = new Map<string, number>();

  constructor(parts: EngineParts) {
    this.parts = parts;
    this.ctx = new Context(parts.transformer, {
      contextLength: parts.contextLength,
      nSlots: parts.slots,
      batchSize: parts.batchSize,
      cacheTokenBudget: parts.cacheTokenBudget,
    });
    this.queue = new RequestQueue(parts.maxQueue ?? 16);
    this.persisted =
      parts.persistedCache === undefined || parts.persistedCache === false
        ? null
        : new PersistedPromptCache(parts.transformer, this.ctx.cache, parts.modelIdentity, parts.persistedCache);
    const c = parts.transformer.config;
    this.info = {
      model: {
        name: c.name,
        arch: c.arch,
        identity: parts.modelIdentity,
        vocabSize: c.vocabSize,
        trainContextLength: c.trainContextLength,
        parameterCount: parts.modelFacts?.parameterCount ?? 0,
        quantization: parts.modelFacts?.quantization ?? 'unknown',
      },
      backend: parts.backend,
      contextLength: parts.contextLength,
      slots: parts.slots,
      ubatchSize: parts.transformer.ubatchSize,
      chatTemplateHash: parts.chat.templateHash,
      ...(parts.chat.fallbackReason !== undefined ? { chatTemplateFallback: parts.chat.fallbackReason } : {}),
    };
    const chatCreate = (req: ChatCompletionRequest) => this.createChat(req);
    const textCreate = (req: CompletionRequest) => this.createCompletion(req);
    this.chat = { completions: { create: chatCreate as ChatCompletions['create'] } };
    this.completions = { create: textCreate as Completions['create'] };
  }

  /** See `Engine.saveCache`. */
  async saveCache(): Promise<number> {
    this.assertLoaded('saveCache');
    const persisted = this.persisted;
    return persisted === null ? 0 : this.queue.run(() => persisted.saveAll());
  }

  /** Restores persisted prefixes of this model, chat template and tokenizer into free slots (errors: none restored). */
  async restoreCache(): Promise<number> {
    const persisted = this.persisted;
    if (persisted === null) return 0;
    return this.queue.run(() => persisted.restore([this.chatKey(), this.textKey()])).catch(() => 0);
  }

  private chatKey(): string {
    const tk = this.parts.tokenizer;
    return PromptCache.keyString({
      model: this.parts.modelIdentity,
      template: this.parts.chat.templateHash,
      tokenizer: `add_bos=${tk.addBos ? 1 : 0};parse_special=1`,
    });
  }

  private textKey(): string {
    const tk = this.parts.tokenizer;
    return PromptCache.keyString({
      model: this.parts.modelIdentity,
      template: '',
      tokenizer: `add_special=${tk.addBos ? 1 : 0}${tk.addEos ? 1 : 0};parse_special=1`,
    });
  }

  /** Tokens of the system-prompt prefix of `prompt` (the part a render of the system message alone shares), or 0. */
  private systemPrefix(
    messages: readonly ChatMessage[],
    prompt: readonly number[],
    chatTemplateKwargs: unknown,
  ): number {
    const first = messages[0];
    if (
      this.persisted?.auto !== true ||
      messages.length < 2 ||
      first?.role !== 'system' ||
      typeof first.content !== 'string'
    )
      return 0;
    let n = this.systemPrefixes.get(first.content);
    if (n === undefined) {
      try {
        const alone = this.parts.chat.build([first], undefined, { chatTemplateKwargs }).tokens;
        n = 0;
        while (n < alone.length && n < prompt.length && alone[n] === prompt[n]) n++;
      } catch {
        n = 0;
      }
      if (this.systemPrefixes.size >= 64) this.systemPrefixes.clear();
      this.systemPrefixes.set(first.content, n);
    }
    return n < prompt.length ? n : 0;
  }

  /** llama.cpp's warmup decode (BOS, plus EOS when the vocab has one), then KV and timers are cleared. */
  async warmup(signal?: AbortSignal): Promise<void> {
    const t0 = nowMs();
    const tk = this.parts.tokenizer;
    const ids = [tk.bosId, tk.eosId].filter((t): t is number => t !== null && t >= 0);
    await this.queue.run(() => this.ctx.warmup(ids, signal), signal);
    this.warmupMs = nowMs() - t0;
  }

  async tokenize(text: string, options: TokenizeOptions = {}): Promise<number[]> {
    this.assertLoaded('tokenize');
    if (typeof text !== 'string')
      throw new LlmError('invalid-request', `tokenize: text must be a string, got ${typeof text}`, {
        details: { field: 'text' },
      });
    return this.parts.tokenizer.encode(text, {
      addSpecial: options.addSpecial ?? true,
      parseSpecial: options.parseSpecial ?? true,
    });
  }

  async detokenize(ids: readonly number[], options: { readonly renderSpecial?: boolean } = {}): Promise<string> {
    this.assertLoaded('detokenize');
    const n = this.parts.tokenizer.vocabSize;
    if (!Array.isArray(ids) || ids.some((t) => !Number.isInteger(t) || t < 0 || t >= n)) {
      throw new LlmError('invalid-request', `detokenize: ids must be an array of integers in 0…${n - 1}`, {
        details: { field: 'ids' },
      });
    }
    return this.parts.tokenizer.decode(ids, { renderSpecial: options.renderSpecial ?? false });
  }

  async stats(): Promise<EngineStats> {
    const t = this.ctx.timers;
    return {
      loadMs: this.parts.loadMs ?? 0,
      warmupMs: this.warmupMs,
      requests: this.requests,
      prefillTokensPerSecond: t.prefillMs > 0 ? (t.prefillTokens * 1000) / t.prefillMs : 0,
      decodeTokensPerSecond: t.decodeMs > 0 ? (t.decodeTokens * 1000) / t.decodeMs : 0,
      timeToFirstTokenMs: this.lastTtftMs,
      prefillTokens: t.prefillTokens,
      decodeTokens: t.decodeTokens,
      promptCache: this.ctx.cacheStats(),
      kvCache: this.parts.transformer.kvCache ?? { type: 'f32', bytes: 0 },
    };
  }

  unload(): Promise<void> {
    if (!this.unloadPromise) {
      const error = new LlmError(
        'aborted',
        'the engine was unloaded while this request was running or queued; create a new engine to continue',
        {
          details: { reason: 'unloaded' },
        },
      );
      this.unloadController.abort(error);
      this.queue.rejectPending(error);
      this.unloadPromise = (async () => {
        await this.queue.idle();
        this.ctx.cache.clear();
        this.parts.transformer.destroy();
        await this.parts.onUnload?.();
      })();
    }
    return this.unloadPromise;
  }

  /** Resolves once no request is running or queued (tests, tools). */
  settled(): Promise<void> {
    return this.queue.idle();
  }

  /** Constrained decoding for this model (XGrammar loaded on first use). */
  get grammar(): GrammarEngine {
    this.grammarEngine ??= new GrammarEngine(
      this.parts.tokenizer,
      this.parts.transformer.config.vocabSize,
      this.parts.modelIdentity,
    );
    return this.grammarEngine;
  }

  /** Compiles the request's constraint, if any (cached per model + constraint). */
  private async withGrammar(p: PreparedRequest): Promise<PreparedRequest> {
    const spec = p.norm.grammar;
    if (!spec) return p;
    return { ...p, compiled: await this.grammar.compile(spec, p.norm.grammarField ?? 'response_format') };
  }

  /** The `Context` (tests and tools inspect KV and cache state through it). */
  get context(): Context {
    return this.ctx;
  }

  private async createChat(req: ChatCompletionRequest): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> {
    this.assertLoaded('chat.completions.create');
    const norm = normalizeChatRequest(req, this.parts.tokenizer.vocabSize);
    const kwargs =
      req.reasoning_effort && !(req.chat_template_kwargs && 'reasoning_effort' in req.chat_template_kwargs)
        ? { ...(req.chat_template_kwargs ?? {}), reasoning_effort: req.reasoning_effort }
        : req.chat_template_kwargs;
    // Tools: the template's own syntax when it renders tools, else the generic prompt and the Hermes syntax.
    const chatFmt = this.parts.chat;
    const toolSpec = norm.tools;
    const toolFormat: ToolCallFormat | undefined = toolSpec
      ? chatFmt.supportsTools
        ? detectToolCallFormat(chatFmt.templateText ?? '')
        : 'hermes'
      : undefined;
    const messages =
      toolSpec && !chatFmt.supportsTools ? withGenericToolPrompt(norm.messages, toolSpec) : norm.messages;
    const toolConstraint = toolSpec && toolFormat ? toolGrammar(toolFormat, toolSpec) : null;
    const normC = toolConstraint ? { ...norm, grammar: toolConstraint, grammarField: 'tools' } : norm;
    const prepared = await this.withGrammar(
      this.prepareChat(
        messages,
        normC,
        req.signal,
        kwargs,
        toolSpec && chatFmt.supportsTools ? toolSpec.raw : undefined,
        toolFormat !== undefined,
      ),
    );
    const shape: AnswerShape = {
      ...(prepared.reasoning ? { reasoning: prepared.reasoning } : {}),
      ...(toolSpec && toolFormat ? { tools: { format: toolFormat, spec: toolSpec } } : {}),
    };
    const tk = this.parts.tokenizer;
    const id = newId('chatcmpl');
    const created = Math.floor(Date.now() / 1000);
    const model = this.info.model.name || this.info.model.identity;
    if (!norm.stream) {
      const results = await this.run(prepared, () => {});
      return {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: results.map((result, index) => {
          const a = ChatAnswer.whole(shape, result.text);
          const message = {
            role: 'assistant' as const,
            content: a.content,
            ...(a.reasoning ? { reasoning_content: a.reasoning } : {}),
            ...(a.calls.length > 0 ? { tool_calls: a.calls } : {}),
          };
          const finish = a.calls.length > 0 ? ('tool_calls' as const) : result.finishReason;
          const logprobs = result.logprobs ? chatLogprobs(tk, result.logprobs) : null;
          return { index, message, finish_reason: finish, logprobs };
        }),
        usage: usageOf(results),
      };
    }
    type Delta = ChatCompletionChunk['choices'][0]['delta'];
    const chunk = (
      index: number,
      delta: Delta,
      finish: ChatCompletionChunk['choices'][0]['finish_reason'],
      usage: CompletionUsage | null,
      lp: readonly PositionLogprobs[] | null = null,
    ): ChatCompletionChunk => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index, delta, finish_reason: finish, logprobs: lp ? chatLogprobs(tk, lp) : null }],
      usage,
    });
    const answers = Array.from({ length: norm.n }, () => new ChatAnswer(shape));
    // One delta may hold reasoning and answer text (a close tag inside it): reasoning goes first, in its own chunk.
    const deltas = (
      i: number,
      s: { reasoning: string; content: string; calls?: readonly ChatToolCallDelta[] },
      lp: readonly PositionLogprobs[] | null,
    ): ChatCompletionChunk[] => {
      const out: ChatCompletionChunk[] = [];
      const calls = s.calls ?? [];
      const textLp = calls.length > 0 ? null : lp; // with call fragments, the log-probabilities ride on those
      if (s.reasoning) out.push(chunk(i, { reasoning_content: s.reasoning }, null, null, s.content ? null : textLp));
      if (s.content || (!s.reasoning && textLp && textLp.length > 0))
        out.push(chunk(i, { content: s.content }, null, null, textLp));
      if (calls.length > 0) out.push(chunk(i, { tool_calls: [...calls] }, null, null, lp));
      return out;
    };
    return this.stream<ChatCompletionChunk>(
      prepared,
      (text, lp, i) => deltas(i, answers[i]!.push(text), lp),
      (r, lp, i, usage) => {
        const e = answers[i]!.end();
        return [
          ...deltas(i, { reasoning: e.reasoning, content: e.content, calls: e.callDeltas }, null),
          chunk(i, {}, e.calls.length > 0 ? 'tool_calls' : r.finishReason, usage, lp),
        ];
      },
      Array.from({ length: norm.n }, (_, i) => chunk(i, { role: 'assistant', content: '' }, null, null)),
    );
  }

  private async createCompletion(req: CompletionRequest): Promise<Completion | AsyncIterable<CompletionChunk>> {
    this.assertLoaded('completions.create');
    const norm = normalizeCompletionRequest(req, this.parts.tokenizer.vocabSize);
    const tk = this.parts.tokenizer;
    const prompt =
      typeof req.prompt === 'string'
        ? tk.encode(req.prompt, { addSpecial: true, parseSpecial: true })
        : [...req.prompt];
    const key = this.textKey();
    const prepared = await this.withGrammar({
      prompt,
      key,
      norm,
      stop: norm.stop,
      eogIds: tk.eogIds,
      signal: req.signal,
    });
    this.checkFits(prompt.length);
    const echo = norm.echo ? (typeof req.prompt === 'string' ? req.prompt : tk.decode(prompt)) : '';
    const id = newId('cmpl');
    const created = Math.floor(Date.now() / 1000);
    const model = this.info.model.name || this.info.model.identity;
    if (!norm.stream) {
      const results = await this.run(prepared, () => {});
      return {
        id,
        object: 'text_completion',
        created,
        model,
        choices: results.map((result, index) => ({
          index,
          text: echo + result.text,
          finish_reason: result.finishReason,
          logprobs: result.logprobs ? completionLogprobs(tk, result.logprobs, echo.length) : null,
        })),
        usage: usageOf(results),
      };
    }
    const offsets = new Array<number>(norm.n).fill(echo.length); // per choice: characters streamed so far
    const chunk = (
      index: number,
      text: string,
      finish: GenerationResult['finishReason'] | null,
      usage: CompletionUsage | null,
      lp: readonly PositionLogprobs[] | null = null,
    ): CompletionChunk => {
      const logprobs = lp ? completionLogprobs(tk, lp, offsets[index]!) : null;
      if (logprobs) offsets[index]! += logprobs.tokens.reduce((n, t) => n + t.length, 0);
      return {
        id,
        object: 'text_completion',
        created,
        model,
        choices: [{ index, text, finish_reason: finish, logprobs }],
        usage,
      };
    };
    return this.stream<CompletionChunk>(
      prepared,
      (t, lp, i) => [chunk(i, t, null, null, lp)],
      (r, lp, i, usage) => [chunk(i, '', r.finishReason, usage, lp)],
      echo ? Array.from({ length: norm.n }, (_, i) => chunk(i, echo, null, null)) : [],
    );
  }

  /** Renders and tokenizes a conversation, trimming whole turns when asked and needed. */
  private prepareChat(
    messages: readonly ChatMessage[],
    norm: NormalizedRequest & { truncate: 'none' | 'history' },
    signal: AbortSignal | undefined,
    chatTemplateKwargs?: unknown,
    tools?: readonly unknown[],
    parseTools = false,
  ): PreparedRequest {
    const tk = this.parts.tokenizer;
    const n = this.parts.contextLength;
    // With truncate: 'history', keep room for the answer: max_tokens, or a quarter of the context (at most half).
    const reserve = Math.min(Number.isFinite(norm.maxTokens) ? norm.maxTokens : Math.floor(n / 4), Math.floor(n / 2));
    const built = this.parts.chat.build(messages, norm.truncate === 'history' ? Math.max(1, n - reserve) : undefined, {
      chatTemplateKwargs,
      signal,
      ...(tools ? { tools } : {}),
    });
    this.checkFits(built.tokens.length);
    const key = this.chatKey();
    const eogIds = new Set([...tk.eogIds, ...built.eogIds]);
    const persistPrefix = this.systemPrefix(messages, built.tokens, chatTemplateKwargs);
    const format = this.parts.chat.reasoningFormat ?? { kind: 'none' as const };
    if (format.kind === 'none' && !parseTools)
      return {
        prompt: [...built.tokens],
        key,
        norm,
        stop: [...built.stop, ...norm.stop],
        eogIds,
        signal,
        persistPrefix,
        isChat: true,
      };
    // Harmony ends a channel with `<|end|>` and opens the next with `<|start|>`: they are not the end of the answer.
    if (format.kind === 'harmony')
      for (const id of eogIds) if (['<|end|>', '<|start|>'].includes(tk.tokenText(id))) eogIds.delete(id);
    // The parsers read their markers as text: those that are single special tokens are rendered into the stream.
    const visibleTokens = new Map<number, string>();
    for (const m of [...parserVisibleMarkers(format), ...(parseTools ? TOOL_MARKERS : [])]) {
      const ids = tk.encode(m, { addSpecial: false, parseSpecial: true });
      if (ids.length === 1 && tk.isControl(ids[0]) && !eogIds.has(ids[0])) visibleTokens.set(ids[0], m);
    }
    const stop = [...built.stop, ...norm.stop].filter(
      (s) => format.kind !== 'harmony' || (s !== '<|end|>' && s !== '<|start|>'),
    );
    const reasoning =
      format.kind === 'none' ? {} : { reasoning: { format, startInside: startsInsideReasoning(format, built.prompt) } };
    return {
      prompt: [...built.tokens],
      key,
      norm,
      stop,
      eogIds,
      signal,
      ...reasoning,
      visibleTokens,
      persistPrefix,
      isChat: true,
    };
  }

  /** Positions a context shift keeps: the BOS token when the prompt starts with it (llama.cpp: n_keep + add_bos). */
  private keptOnShift(prompt: readonly number[]): number {
    const tk = this.parts.tokenizer;
    return tk.addBos && tk.bosId !== null && prompt[0] === tk.bosId ? 1 : 0;
  }

  private checkFits(nTokens: number): void {
    const n = this.parts.contextLength;
    if (nTokens >= n) {
      throw new LlmError(
        'context-overflow',
        `preparing the prompt: ${nTokens} tokens do not fit the context of ${n}; pass truncate: 'history' (chat), shorten the input, or load with a larger contextLength`,
        { details: { promptTokens: nTokens, contextLength: n } },
      );
    }
  }

  /** Runs a prepared request's choices in the queue; `onText` receives each safe text delta with its choice. */
  private run(
    p: PreparedRequest,
    onText: (text: string, index: number) => void,
    cancel?: AbortSignal,
    onToken?: GenerationInput['onToken'],
  ): Promise<GenerationResult[]> {
    this.queue.checkCapacity();
    const job = new AbortController();
    const parents = [p.signal, this.unloadController.signal, cancel].filter((s): s is AbortSignal => s !== undefined);
    const onAbort = (e: Event): void => job.abort((e.target as AbortSignal).reason);
    for (const s of parents) {
      if (s.aborted) job.abort(s.reason);
      else s.addEventListener('abort', onAbort, { once: true });
    }
    const input: GenerationInput = {
      prompt: p.prompt,
      cacheKey: p.key,
      sampling: p.norm.sampling,
      maxTokens: p.norm.maxTokens,
      stop: p.stop,
      eogIds: p.eogIds,
      signal: job.signal,
      ...(p.norm.logprobs !== undefined ? { logprobs: p.norm.logprobs } : {}),
      ...(onToken ? { onToken } : {}),
      ...(p.visibleTokens && p.visibleTokens.size > 0 ? { visibleTokens: p.visibleTokens } : {}),
      ...((this.parts.contextShift ?? p.isChat === true)
        ? { contextShift: { nKeep: this.keptOnShift(p.prompt) } }
        : {}),
    };
    const task = async (): Promise<GenerationResult[]> => {
      this.assertLoaded('request');
      const compiled = p.compiled;
      const constraints = compiled
        ? await Promise.all(Array.from({ length: p.norm.n }, () => this.grammar.constraint(compiled, p.eogIds)))
        : undefined;
      const gen = generateChoices(this.ctx, this.parts.tokenizer, input, p.norm.n, constraints);
      try {
        for (;;) {
          const step = await gen.next();
          if (step.done) {
            this.lastTtftMs = step.value[0]!.timings.timeToFirstTokenMs;
            if (this.persisted !== null && (p.persistPrefix ?? 0) > 0)
              await this.persisted.saveOnce(p.key, p.prompt.slice(0, p.persistPrefix));
            return step.value;
          }
          onText(step.value.text, step.value.index);
        }
      } finally {
        this.requests++;
      }
    };
    return this.queue
      .run(task, job.signal)
      .catch((e: unknown) => {
        if (this.unloadController.signal.aborted) throw this.unloadController.signal.reason;
        if (job.signal.aborted && !isLlmError(e, 'aborted'))
          throw new LlmError('aborted', 'request was aborted', { cause: e });
        throw e;
      })
      .finally(() => {
        for (const s of parents) s.removeEventListener('abort', onAbort);
      });
  }

  /**
   * Starts a request whose output is a stream of chunks: `first`, each choice's deltas (tagged with its index), then
   * each choice's final chunks, the last of which carries the usage of all choices.
   */
  private stream<T>(
    p: PreparedRequest,
    delta: (text: string, logprobs: readonly PositionLogprobs[] | null, index: number) => T[],
    final: (
      r: GenerationResult,
      logprobs: readonly PositionLogprobs[] | null,
      index: number,
      usage: CompletionUsage | null,
    ) => T[],
    first: readonly T[],
  ): AsyncIterable<T> {
    this.queue.checkCapacity();
    const cancel = new AbortController();
    const out = new PushStream<T>(() => cancel.abort(new LlmError('aborted', 'the stream was closed by its reader')));
    for (const c of first) out.push(c);
    // The reader's abort ends the stream at once, even if chunks are still buffered.
    const onAbort = (): void => out.abort(new LlmError('aborted', 'request was aborted', { cause: p.signal?.reason }));
    p.signal?.addEventListener('abort', onAbort, { once: true });
    // Log-probabilities of the tokens behind each text delta travel in that delta's chunk (the rest in the last).
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
    this.run(
      p,
      (t, i) => {
        for (const c of delta(t, take(i), i)) out.push(c);
      },
      cancel.signal,
      onToken,
    )
      .then(
        (results) => {
          results.forEach((r, i) => {
            const usage = i === results.length - 1 ? usageOf(results) : null;
            for (const c of final(r, take(i), i, usage)) out.push(c);
          });
          out.end();
        },
        (e: unknown) => out.fail(e),
      )
      .finally(() => p.signal?.removeEventListener('abort', onAbort));
    return out;
  }

  private assertLoaded(step: string): void {
    if (this.unloadController.signal.aborted) {
      throw new LlmError('invalid-request', `${step}: the engine was unloaded; create a new engine`, {
        details: { reason: 'unloaded' },
      });
    }
  }
}

/** Usage of a request's choices: the prompt once (it is prefilled once), the completion tokens of every choice. */
function usageOf(results: readonly GenerationResult[]): CompletionUsage {
  const first = results[0]!;
  const completion = results.reduce((sum, r) => sum + r.tokens.length, 0);
  return {
    prompt_tokens: first.promptTokens,
    completion_tokens: completion,
    total_tokens: first.promptTokens + completion,
    prompt_tokens_details: { cached_tokens: first.cachedTokens },
  };
}
