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
import type { PersistedPromptCacheOptions } from '../engine/persisted-cache.js';
import { type LazyPersistedCache, lazyPersistedCache, saveAutomatically } from './lazy-persisted-cache.js';
import { RequestQueue } from '../engine/request-queue.js';
import type { Transformer } from '../model/model.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import type { ChatFormatter } from './chat-formatter.js';
import type { BackendInfo, ChatCompletions, Completions, Engine, EngineInfo } from './engine.js';
import type { EngineStats, TokenizeOptions } from './engine.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatMessage,
  Completion,
  CompletionChunk,
  CompletionRequest,
} from './types.js';
import { chatChunks, chatCompletion } from './chat-response.js';
import { type ChunkMakers, completionChunks, responseMeta, textCompletion } from './completion-response.js';
import { streamChunks } from './chunk-stream.js';
import { checkPromptFits, type PreparedRequest, prepareChatRequest } from './prepared-request.js';
import type { ToolCallFormat } from '../tools/tool-call-format.js';
import { type AnswerShape, loadToolCallReader } from './chat-answer.js';
import type { GrammarEngine } from '../structured/grammar-engine.js';
import { loadGrammarEngine } from '../structured/grammar-engine-loader.js';
import { normalizeChatRequest, normalizeCompletionRequest, type NormalizedRequest } from './validate-request.js';
import type { Embeddings, RerankRequest, RerankResponse } from './embedding-types.js';
import type { EmbeddingHost } from './embeddings.js';
import { requestImages } from './image-request-parts.js';

/** Everything an engine runs on, already loaded. */
export interface EngineParts {
  readonly transformer: Transformer;
  readonly tokenizer: Tokenizer;
  readonly chat: ChatFormatter;
  /** `tokenizer.chat_template.rerank` of the GGUF, for `rerank`. */
  readonly rerankTemplate?: string;
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
  /** Pipelined greedy decode where the backend chains tokens (`ContextOptions.pipelinedDecode`; default true). */
  readonly pipelinedDecode?: boolean;
  /** The mmproj's vision encoder (`EngineOptions.mmproj`): image content parts need it. */
  readonly vision?: import('../vision/vision-encoder.js').VisionEncoder;
}

/** Creates an engine over loaded parts, running the warmup decode unless disabled. */
export async function createEngineFromParts(parts: EngineParts, signal?: AbortSignal): Promise<Engine> {
  const engine = new LocalEngine(parts);
  if (parts.warmup !== false) await engine.warmup(signal);
  await engine.restoreCache();
  return engine;
}

/** `Engine` running in the calling thread. */
export class LocalEngine implements Engine {
  readonly info: EngineInfo;
  readonly chat: { readonly completions: ChatCompletions };
  readonly completions: Completions;
  readonly embeddings: Embeddings;
  private readonly parts: EngineParts;
  private readonly ctx: Context;
  private readonly queue: RequestQueue;
  private readonly unloadController = new AbortController();
  private unloadPromise: Promise<void> | null = null;
  private warmupMs = 0;
  private requests = 0;
  private lastTtftMs = 0;
  private grammarEngine: Promise<GrammarEngine> | null = null;
  private readonly persisted: LazyPersistedCache;
  /** System-prompt prefix lengths by system message text (bounded). */
  private readonly systemPrefixes = new Map<string, number>();

  constructor(parts: EngineParts) {
    this.parts = parts;
    this.ctx = new Context(parts.transformer, {
      contextLength: parts.contextLength,
      nSlots: parts.slots,
      batchSize: parts.batchSize,
      cacheTokenBudget: parts.cacheTokenBudget,
      pipelinedDecode: parts.pipelinedDecode,
    });
    this.queue = new RequestQueue(parts.maxQueue ?? 16);
    this.persisted = lazyPersistedCache(parts.persistedCache, parts.transformer, this.ctx.cache, parts.modelIdentity);
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
        embeddingLength: c.embeddingLength,
        pooling: c.poolingType,
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
    this.embeddings = {
      create: async (req) => {
        this.assertLoaded('embeddings.create');
        const { embeddingsRequest } = await import('./embeddings.js'); // a chunk fetched by the first embeddings call
        return embeddingsRequest(this.embeddingHost(), req).finally(() => this.requests++);
      },
    };
  }

  /** See `Engine.rerank`. */
  async rerank(req: RerankRequest): Promise<RerankResponse> {
    this.assertLoaded('rerank');
    const { rerankRequest } = await import('./rerank.js');
    return rerankRequest(this.embeddingHost(), req).finally(() => this.requests++);
  }

  private embeddingHost(): EmbeddingHost {
    const { transformer, tokenizer, contextLength, rerankTemplate } = this.parts;
    const host = { transformer, tokenizer, contextLength, cache: this.ctx.cache, queue: this.queue };
    return rerankTemplate === undefined ? host : { ...host, rerankTemplate };
  }

  /** See `Engine.saveCache`. */
  async saveCache(): Promise<number> {
    this.assertLoaded('saveCache');
    const persisted = this.persisted.cache;
    return persisted === null ? 0 : this.queue.run(async () => (await persisted).saveAll());
  }

  /** Restores persisted prefixes of this model, chat template and tokenizer into free slots (errors: none restored). */
  async restoreCache(): Promise<number> {
    const persisted = this.persisted.cache;
    if (persisted === null) return 0;
    return this.queue.run(async () => (await persisted).restore([this.chatKey(), this.textKey()])).catch(() => 0);
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
      // Wanted for the persisted cache's automatic entry, and by recurrent models as a snapshot point.
      (!this.persisted.auto && !this.parts.transformer.hasRecurrentState) ||
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

  /** Constrained decoding for this model (its code and XGrammar fetched by the first constrained request). */
  grammar(): Promise<GrammarEngine> {
    const { tokenizer, transformer, modelIdentity } = this.parts;
    this.grammarEngine ??= loadGrammarEngine(tokenizer, transformer.config.vocabSize, modelIdentity).catch((e) => {
      this.grammarEngine = null; // a failed fetch may succeed on the next request
      throw e;
    });
    return this.grammarEngine;
  }

  /** Compiles the request's constraint, if any (cached per model + constraint). */
  private async withGrammar(p: PreparedRequest): Promise<PreparedRequest> {
    const spec = p.norm.grammar;
    if (!spec) return p;
    const engine = await this.grammar();
    return { ...p, compiled: await engine.compile(spec, p.norm.grammarField ?? 'response_format') };
  }

  /** The `Context` (tests and tools inspect KV and cache state through it). */
  get context(): Context {
    return this.ctx;
  }

  private async createChat(req: ChatCompletionRequest): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> {
    this.assertLoaded('chat.completions.create');
    const { messages: parts, images } = await requestImages(this.parts.vision, req.messages, req.signal);
    const norm = normalizeChatRequest({ ...req, messages: parts }, this.parts.tokenizer.vocabSize);
    const kwargs =
      req.reasoning_effort && !(req.chat_template_kwargs && 'reasoning_effort' in req.chat_template_kwargs)
        ? { ...(req.chat_template_kwargs ?? {}), reasoning_effort: req.reasoning_effort }
        : req.chat_template_kwargs;
    // Tools: the template's own syntax when it renders tools, else the generic prompt and the Hermes syntax.
    const chatFmt = this.parts.chat;
    const parallel = req.parallel_tool_calls ?? chatFmt.supportsParallelToolCalls === true; // llama.cpp's default
    const toolSpec = norm.tools && { ...norm.tools, parallel };
    const read = toolSpec ? await loadToolCallReader() : undefined; // the tool-call chunk
    const toolFormat: ToolCallFormat | undefined = read
      ? chatFmt.supportsTools
        ? read.detectToolCallFormat(chatFmt.templateText ?? '')
        : 'hermes'
      : undefined;
    const messages =
      toolSpec && read && !chatFmt.supportsTools ? read.withGenericToolPrompt(norm.messages, toolSpec) : norm.messages;
    const toolConstraint = toolSpec && toolFormat && read ? read.toolGrammar(toolFormat, toolSpec) : null;
    const normC = toolConstraint ? { ...norm, grammar: toolConstraint, grammarField: 'tools' } : norm;
    const prepared = await this.withGrammar(
      this.prepareChat(
        messages,
        normC,
        req.signal,
        kwargs,
        toolSpec && chatFmt.supportsTools ? toolSpec.raw : undefined,
        toolFormat !== undefined,
        images,
      ),
    );
    const shape: AnswerShape = {
      ...(prepared.reasoning ? { reasoning: prepared.reasoning } : {}),
      ...(toolSpec && toolFormat && read ? { tools: { format: toolFormat, spec: toolSpec, read } } : {}),
    };
    const meta = responseMeta('chatcmpl', this.info);
    if (!norm.stream) return chatCompletion(meta, shape, await this.run(prepared, () => {}), this.parts.tokenizer);
    const chunks = chatChunks(meta, shape, norm.n, this.parts.tokenizer);
    return this.stream(prepared, chunks);
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
    checkPromptFits(prompt.length, this.parts.contextLength);
    const echo = norm.echo ? (typeof req.prompt === 'string' ? req.prompt : tk.decode(prompt)) : '';
    const meta = responseMeta('cmpl', this.info);
    if (!norm.stream) return textCompletion(meta, echo, await this.run(prepared, () => {}), tk);
    const chunks = completionChunks(meta, echo, norm.n, tk);
    return this.stream(prepared, chunks);
  }

  /** Renders and tokenizes a conversation (`prepareChatRequest`) with this engine's cache key and prefix cache. */
  private prepareChat(
    messages: readonly ChatMessage[],
    norm: NormalizedRequest & { truncate: 'none' | 'history' },
    signal: AbortSignal | undefined,
    chatTemplateKwargs?: unknown,
    tools?: readonly unknown[],
    parseTools = false,
    images?: Parameters<typeof prepareChatRequest>[1]['images'],
  ): PreparedRequest {
    return prepareChatRequest(
      {
        tokenizer: this.parts.tokenizer,
        chat: this.parts.chat,
        contextLength: this.parts.contextLength,
        key: this.chatKey(),
        checkFits: (n) => checkPromptFits(n, this.parts.contextLength),
        systemPrefix: (tokens) => this.systemPrefix(messages, tokens, chatTemplateKwargs),
      },
      { messages, norm, signal, chatTemplateKwargs, tools, parseTools, ...(images ? { images } : {}) },
    );
  }

  /** Positions a context shift keeps: the BOS token when the prompt starts with it (llama.cpp: n_keep + add_bos). */
  private keptOnShift(prompt: readonly number[]): number {
    const tk = this.parts.tokenizer;
    return tk.addBos && tk.bosId !== null && prompt[0] === tk.bosId ? 1 : 0;
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
      ...(p.persistPrefix ? { stateBoundaries: [p.persistPrefix] } : {}),
      ...(p.images ? { images: p.images } : {}), // no context shift through image chunks (as llama-server)
      ...((this.parts.contextShift ?? p.isChat === true) && !p.images
        ? { contextShift: { nKeep: this.keptOnShift(p.prompt) } }
        : {}),
    };
    const task = async (): Promise<GenerationResult[]> => {
      this.assertLoaded('request');
      const compiled = p.compiled;
      const grammar = compiled ? await this.grammar() : undefined;
      const constraints =
        compiled && grammar
          ? await Promise.all(Array.from({ length: p.norm.n }, () => grammar.constraint(compiled, p.eogIds)))
          : undefined;
      const gen = generateChoices(this.ctx, this.parts.tokenizer, input, p.norm.n, constraints);
      try {
        for (;;) {
          const step = await gen.next();
          if (step.done) {
            this.lastTtftMs = step.value[0]!.timings.timeToFirstTokenMs;
            if (this.persisted.auto && this.persisted.cache && (p.persistPrefix ?? 0) > 0)
              await saveAutomatically(this.persisted.cache, p.key, p.prompt.slice(0, p.persistPrefix));
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

  /** Starts a request whose output is a stream of chunks (`streamChunks` over this engine's queue). */
  private stream<T>(p: PreparedRequest, makers: ChunkMakers<T>): AsyncIterable<T> {
    this.queue.checkCapacity();
    return streamChunks(p, makers, (onText, cancel, onToken) => this.run(p, onText, cancel, onToken));
  }

  private assertLoaded(step: string): void {
    if (this.unloadController.signal.aborted) {
      throw new LlmError('invalid-request', `${step}: the engine was unloaded; create a new engine`, {
        details: { reason: 'unloaded' },
      });
    }
  }
}
