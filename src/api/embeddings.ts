/**
 * `engine.embeddings.create`: validates the request (`normalizeEmbeddingRequest`), tokenizes each input as
 * llama.cpp's embedding path does (BOS/EOS as the vocabulary says, special-token text parsed), runs the sequences
 * from position 0 of one leased slot — packed into as few forward passes as the model allows
 * (`model/packed-hidden.ts`), never attending to each other — reads back the output-normed
 * hidden states, pools them by the model's `pooling_type` (model/pooling.ts) and finishes each vector (Matryoshka
 * truncation, L2 normalisation, float or base64), in OpenAI's response shape.
 */

import type { PromptCache } from '../engine/prompt-cache.js';
import type { RequestQueue } from '../engine/request-queue.js';
import { invalidField } from '../engine/sampling-options.js';
import { LlmError, throwIfAborted } from '../errors.js';
import type { Transformer } from '../model/model.js';
import { forEachHiddenStates } from '../model/packed-hidden.js';
import { finishEmbedding, poolHiddenStates, projectPooled } from '../model/pooling.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import type { EmbeddingRequest, EmbeddingResponse } from './embedding-types.js';

/** Fields `embeddings.create` reads; any other is refused by name. */
const FIELDS = new Set([
  'input',
  'model',
  'dimensions',
  'encoding_format',
  'pooling',
  'normalize',
  'truncate',
  'signal',
  'user',
]);

/** A checked request. */
interface NormalizedEmbeddingRequest {
  /** Each input: a text, or token ids as given. */
  readonly inputs: readonly (string | readonly number[])[];
  readonly dimensions: number | undefined;
  /** The request's pooling, or undefined for the model's. */
  readonly pooling: 'mean' | 'cls' | 'last' | undefined;
  readonly base64: boolean;
  readonly normalize: boolean;
  readonly truncate: boolean;
}

/** Checks `req` against a model of `nEmbd` dimensions and `vocabSize` tokens; `invalid-request` naming the field. */
function normalizeEmbeddingRequest(
  req: EmbeddingRequest,
  nEmbd: number,
  vocabSize: number,
): NormalizedEmbeddingRequest {
  if (typeof req !== 'object' || req === null) invalidField('request', req, 'an object with an input');
  for (const [key, value] of Object.entries(req)) {
    if (value !== undefined && !FIELDS.has(key)) {
      throw new LlmError('invalid-request', `embeddings: request field '${key}' is not supported`, {
        details: { field: key },
      });
    }
  }
  const raw = req.input as unknown;
  const list: unknown[] =
    typeof raw === 'string'
      ? [raw]
      : Array.isArray(raw)
        ? raw
        : invalidField('input', raw, 'a string, an array of strings or an array of token-id arrays');
  if (list.length === 0) invalidField('input', raw, 'a non-empty string or a non-empty array');
  const inputs = list.map((item, i): string | readonly number[] => {
    const field = typeof raw === 'string' ? 'input' : `input[${i}]`;
    if (typeof item === 'string') {
      if (item.length === 0) invalidField(field, item, 'a non-empty string (an empty text has no embedding)');
      return item;
    }
    if (Array.isArray(item)) {
      if (item.length === 0) invalidField(field, item, 'a non-empty array of token ids');
      item.forEach((t, j) => {
        if (!(Number.isInteger(t) && (t as number) >= 0 && (t as number) < vocabSize))
          invalidField(`${field}[${j}]`, t, `a token id in 0…${vocabSize - 1}`);
      });
      return item as number[];
    }
    return invalidField(field, item, 'a string or an array of token ids');
  });
  const { dimensions, encoding_format: format, normalize, truncate, pooling } = req;
  if (pooling !== undefined && pooling !== 'mean' && pooling !== 'cls' && pooling !== 'last')
    invalidField('pooling', pooling, "'mean', 'cls' or 'last'");
  if (dimensions !== undefined && !(Number.isInteger(dimensions) && dimensions >= 1 && dimensions <= nEmbd)) {
    invalidField('dimensions', dimensions, `an integer in 1…${nEmbd} (this model's embedding width)`);
  }
  if (format !== undefined && format !== 'float' && format !== 'base64')
    invalidField('encoding_format', format, "'float' or 'base64'");
  for (const [name, v] of [
    ['normalize', normalize],
    ['truncate', truncate],
  ] as const) {
    if (v !== undefined && typeof v !== 'boolean') invalidField(name, v, 'a boolean');
  }
  return {
    inputs,
    dimensions,
    pooling,
    base64: format === 'base64',
    normalize: normalize ?? true,
    truncate: truncate ?? false,
  };
}

/** `v` as base64 of little-endian float32 values (OpenAI's `encoding_format: 'base64'`). */
function float32Base64(v: Float32Array): string {
  const bytes = new Uint8Array(v.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < v.length; i++) view.setFloat32(i * 4, v[i]!, true);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** The tokens of one input (texts with the vocabulary's BOS/EOS), cut to `maxTokens` when `truncate`. */
function inputTokens(
  input: string | readonly number[],
  index: number,
  tokenizer: Tokenizer,
  maxTokens: number,
  truncate: boolean,
): number[] {
  const tokens =
    typeof input === 'string' ? tokenizer.encode(input, { addSpecial: true, parseSpecial: true }) : [...input];
  if (tokens.length === 0) invalidField(`input[${index}]`, input, 'text that tokenizes to at least one token');
  if (tokens.length <= maxTokens) return tokens;
  if (truncate) return tokens.slice(0, maxTokens);
  throw new LlmError(
    'invalid-request',
    `embeddings: input ${index} is ${tokens.length} tokens, longer than the context (${maxTokens}); shorten it, ` +
      'load the model with a larger contextLength, or pass truncate: true to cut it',
    { details: { field: `input[${index}]`, tokens: tokens.length, contextLength: maxTokens } },
  );
}

/**
 * Embeds every input of `req` on `model` in `slot` (whose KV is overwritten). `contextLength` bounds an input's
 * tokens; `modelName` fills `response.model`.
 */
async function computeEmbeddings(
  model: Transformer,
  tokenizer: Tokenizer,
  slot: number,
  req: NormalizedEmbeddingRequest,
  contextLength: number,
  modelName: string,
  signal?: AbortSignal,
): Promise<EmbeddingResponse> {
  const c = model.config;
  const pooling = req.pooling ?? c.poolingType;
  if (pooling === 'none' || pooling === 'rank' || !model.hiddenStates) {
    throw new LlmError(
      'invalid-request',
      `embeddings: this model (${c.arch}) has pooling type '${c.poolingType}', so it gives no sentence embeddings; ` +
        "load an embedding model (one whose GGUF sets pooling_type to mean, cls or last), or pass 'pooling' " +
        'when it is one whose file does not say',
      { details: { pooling: c.poolingType } },
    );
  }
  const all = req.inputs.map((input, i) => inputTokens(input, i, tokenizer, contextLength, req.truncate));
  const data: EmbeddingResponse['data'] = [];
  let promptTokens = 0;
  throwIfAborted(signal, 'computing embeddings');
  // cls / last pooling: the model may give only the pooled rows (`hidden` then holds one row per input).
  const rows = pooling === 'cls' || pooling === 'last' ? pooling : undefined;
  await forEachHiddenStates(
    model,
    all,
    slot,
    signal,
    (index, hidden) => {
      const n = all[index]!.length;
      const pooled = projectPooled(
        poolHiddenStates(hidden, hidden.length / c.embeddingLength, c.embeddingLength, pooling),
        model.pooledProjection,
      );
      const v = finishEmbedding(pooled, req.dimensions, req.normalize);
      data.push({ object: 'embedding', index, embedding: req.base64 ? float32Base64(v) : Array.from(v) });
      promptTokens += n;
    },
    rows,
  );
  return {
    object: 'list',
    data,
    model: modelName,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/** What an engine lends `embeddingsRequest`: its model, tokenizer, prompt cache (for a slot) and request queue. */
export interface EmbeddingHost {
  readonly transformer: Transformer;
  readonly tokenizer: Tokenizer;
  readonly cache: PromptCache;
  readonly queue: RequestQueue;
  readonly contextLength: number;
  /** The GGUF's `tokenizer.chat_template.rerank` (`{query}`, `{document}`), when it has one. */
  readonly rerankTemplate?: string;
}

/** Prompt-cache key of the slot an embeddings request leases (it records no tokens: the slot stays reusable). */
const EMBEDDING_CACHE_KEY = 'webgguf:embeddings';

/**
 * `engine.embeddings.create` of an in-thread engine: checks the request, then waits its turn in the queue and
 * embeds in a slot leased from the prompt cache (its cached prefix, if any, is given up as for any new prompt).
 */
export async function embeddingsRequest(host: EmbeddingHost, req: EmbeddingRequest): Promise<EmbeddingResponse> {
  const c = host.transformer.config;
  const norm = normalizeEmbeddingRequest(req, c.embeddingLength, c.vocabSize);
  host.queue.checkCapacity();
  return host.queue.run(async () => {
    const lease = host.cache.acquire(EMBEDDING_CACHE_KEY, []);
    try {
      const name = c.name || c.arch;
      return await computeEmbeddings(
        host.transformer,
        host.tokenizer,
        lease.slot,
        norm,
        host.contextLength,
        name,
        req.signal,
      );
    } finally {
      host.cache.release(lease);
    }
  }, req.signal);
}
