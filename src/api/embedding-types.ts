/**
 * Request and response shapes of `engine.embeddings.create` (OpenAI's `/v1/embeddings`) and `engine.rerank`.
 */

/** `engine.embeddings.create` request. */
export interface EmbeddingRequest {
  /**
   * One text, several texts, or pre-tokenized inputs (arrays of token ids, fed as they are). Texts are tokenized with
   * the model's special tokens (BOS/EOS as its vocabulary says), as llama.cpp's embedding path does. Some embedders
   * expect a task prefix in the text itself (e.g. nomic's `search_query: `, E5's `query: `); add it yourself.
   */
  readonly input: string | readonly string[] | readonly (readonly number[])[];
  /** Ignored (the engine serves one model); accepted for OpenAI compatibility. */
  readonly model?: string;
  /**
   * Matryoshka truncation: keep the first `dimensions` values (then re-normalise). At most the model's embedding
   * width; default all of them.
   */
  readonly dimensions?: number;
  /** 'float' (default): `embedding` is a number[]; 'base64': little-endian float32 bytes in base64, as OpenAI. */
  readonly encoding_format?: 'float' | 'base64';
  /**
   * Pooling of the hidden states, overriding the model's `pooling_type` (llama.cpp's `--pooling`): needed for GGUFs
   * that do not state one, e.g. Qwen3-Embedding ('last'; append `<|endoftext|>` to each text as its card says).
   */
  readonly pooling?: 'mean' | 'cls' | 'last';
  /** L2-normalise each embedding (default true); false returns the pooled vector as llama.cpp computes it. */
  readonly normalize?: boolean;
  /** Cut inputs longer than the context to its length instead of failing with `invalid-request` (default false). */
  readonly truncate?: boolean;
  /** Aborts with `LlmError('aborted')`. */
  readonly signal?: AbortSignal;
}

/** One embedding of a response. */
export interface EmbeddingData {
  readonly object: 'embedding';
  /** Position of the input in `request.input`. */
  readonly index: number;
  /** The vector (number[] for 'float', a base64 string of float32 values for 'base64'). */
  readonly embedding: number[] | string;
}

/** Token counts of an embeddings request. */
export interface EmbeddingUsage {
  readonly prompt_tokens: number;
  readonly total_tokens: number;
}

/** `engine.embeddings.create` response. */
export interface EmbeddingResponse {
  readonly object: 'list';
  readonly data: EmbeddingData[];
  /** The model's `general.name` (or its architecture when unnamed). */
  readonly model: string;
  readonly usage: EmbeddingUsage;
}

/** `engine.rerank` request (the `/v1/rerank` shape of llama-server, Jina and Cohere). */
export interface RerankRequest {
  readonly query: string;
  /** Documents to score against the query (at least one, none empty). */
  readonly documents: readonly string[];
  /** Keep only the best `top_n` results (default all). */
  readonly top_n?: number;
  /** Include each document's text in its result (default false). */
  readonly return_documents?: boolean;
  /** Ignored (one model per engine). */
  readonly model?: string;
  /** Cut query + document pairs longer than the context instead of failing (default false). */
  readonly truncate?: boolean;
  readonly signal?: AbortSignal;
}

/** One scored document. */
export interface RerankResult {
  /** Position of the document in `request.documents`. */
  readonly index: number;
  /** The reranker's relevance score, higher is more relevant (Qwen3-Reranker: P(yes)). */
  readonly relevance_score: number;
  readonly document?: { readonly text: string };
}

/** `engine.rerank` response: results sorted by score, highest first. */
export interface RerankResponse {
  readonly object: 'list';
  readonly model: string;
  readonly results: RerankResult[];
  readonly usage: EmbeddingUsage;
}

/** `engine.embeddings`. */
export interface Embeddings {
  create(request: EmbeddingRequest): Promise<EmbeddingResponse>;
}
