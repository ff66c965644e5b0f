/**
 * `engine.rerank`: scores documents against a query with a `rank`-pooling model (a reranker), as llama-server's
 * `/v1/rerank` does: each (query, document) pair becomes one sequence — the GGUF's `tokenizer.chat_template.rerank`
 * with `{query}` and `{document}` filled in when it has one (Qwen3-Reranker), else BOS? query EOS? document EOS? —
 * whose hidden states go through the model's classifier head (model/pooling.ts `rankOutputs`); the score is its first
 * output. Results come back sorted, highest first. Pairs run one at a time in a slot leased from the prompt cache.
 */

import { invalidField } from '../engine/sampling-options.js';
import { LlmError, throwIfAborted } from '../errors.js';
import { forEachHiddenStates } from '../model/packed-hidden.js';
import { rankOutputs } from '../model/pooling.js';
import type { RerankRequest, RerankResponse, RerankResult } from './embedding-types.js';
import type { EmbeddingHost } from './embeddings.js';

const FIELDS = new Set(['query', 'documents', 'top_n', 'return_documents', 'model', 'truncate', 'signal']);

/** Prompt-cache key of the slot a rerank request leases (it records no tokens). */
const RERANK_CACHE_KEY = 'webgguf:rerank';

/** Checks `req`; `invalid-request` naming the field. */
function checkRerankRequest(req: RerankRequest): void {
  if (typeof req !== 'object' || req === null) invalidField('request', req, 'an object with query and documents');
  for (const [key, value] of Object.entries(req)) {
    if (value !== undefined && !FIELDS.has(key))
      throw new LlmError('invalid-request', `rerank: request field '${key}' is not supported`, {
        details: { field: key },
      });
  }
  if (typeof req.query !== 'string' || req.query.length === 0) invalidField('query', req.query, 'a non-empty string');
  if (!Array.isArray(req.documents) || req.documents.length === 0)
    invalidField('documents', req.documents, 'a non-empty array of strings');
  req.documents.forEach((d, i) => {
    if (typeof d !== 'string' || d.length === 0) invalidField(`documents[${i}]`, d, 'a non-empty string');
  });
  if (req.top_n !== undefined && !(Number.isInteger(req.top_n) && req.top_n >= 1))
    invalidField('top_n', req.top_n, 'a positive integer');
  for (const name of ['return_documents', 'truncate'] as const) {
    if (req[name] !== undefined && typeof req[name] !== 'boolean') invalidField(name, req[name], 'a boolean');
  }
}

/** The tokens of one (query, document) pair, llama-server's `format_prompt_rerank`. */
function pairTokens(host: EmbeddingHost, query: string, doc: string): number[] {
  const tk = host.tokenizer;
  if (host.rerankTemplate !== undefined) {
    const text = host.rerankTemplate.replaceAll('{query}', query).replaceAll('{document}', doc);
    return tk.encode(text, { addSpecial: false, parseSpecial: true });
  }
  const plain = (t: string): number[] => tk.encode(t, { addSpecial: false, parseSpecial: false });
  const eos = tk.addEos && tk.eosId !== null ? [tk.eosId] : [];
  return [...(tk.addBos && tk.bosId !== null ? [tk.bosId] : []), ...plain(query), ...eos, ...plain(doc), ...eos];
}

/** `engine.rerank` of an in-thread engine. */
export async function rerankRequest(host: EmbeddingHost, req: RerankRequest): Promise<RerankResponse> {
  checkRerankRequest(req);
  const model = host.transformer;
  const c = model.config;
  const head = model.rankHead;
  if (c.poolingType !== 'rank' || !head || !model.hiddenStates) {
    throw new LlmError(
      'invalid-request',
      `rerank: this model (${c.arch}, pooling '${c.poolingType}') is not a reranker; load one whose GGUF sets ` +
        'pooling_type to rank and has a cls.output head (e.g. a Qwen3-Reranker)',
      { details: { pooling: c.poolingType } },
    );
  }
  const pairs = req.documents.map((doc, i) => {
    const tokens = pairTokens(host, req.query, doc);
    if (tokens.length <= host.contextLength) return tokens;
    if (req.truncate === true) return tokens.slice(0, host.contextLength);
    throw new LlmError(
      'invalid-request',
      `rerank: query + document ${i} are ${tokens.length} tokens, longer than the context (${host.contextLength}); ` +
        'shorten them, load the model with a larger contextLength, or pass truncate: true',
      { details: { field: `documents[${i}]`, tokens: tokens.length, contextLength: host.contextLength } },
    );
  });
  host.queue.checkCapacity();
  const scores = await host.queue.run(async () => {
    const lease = host.cache.acquire(RERANK_CACHE_KEY, []);
    try {
      const out: number[] = [];
      throwIfAborted(req.signal, 'reranking');
      // The model may give only the row the head reads (one per pair): rankOutputs then pools that one row.
      await forEachHiddenStates(
        model,
        pairs,
        lease.slot,
        req.signal,
        (i, hidden) => {
          out[i] = rankOutputs(hidden, hidden.length / c.embeddingLength, c.embeddingLength, head)[0]!;
        },
        head.meanPool ? undefined : head.lastToken ? 'last' : 'cls',
      );
      return out;
    } finally {
      host.cache.release(lease);
    }
  }, req.signal);
  const results: RerankResult[] = scores
    .map((relevance_score, index) => ({
      index,
      relevance_score,
      ...(req.return_documents === true ? { document: { text: req.documents[index]! } } : {}),
    }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    .slice(0, req.top_n ?? scores.length);
  const n = pairs.reduce((s, p) => s + p.length, 0);
  return { object: 'list', model: c.name || c.arch, results, usage: { prompt_tokens: n, total_tokens: n } };
}
