/**
 * The demo's model catalogue: well-known small GGUF chat models by their public Hugging Face URLs, with download size
 * and the memory they need (weights + a 4k-token f16 KV cache, rounded up).
 */

/** One catalogue entry. */
export interface CatalogueModel {
  readonly id: string;
  readonly label: string;
  readonly url: string;
  /** Download size in bytes (approximate). */
  readonly bytes: number;
  /** Memory needed to run with a 4k context, in bytes (approximate). */
  readonly memoryBytes: number;
  readonly note: string;
  /** The model's vision projector (llama.cpp's mmproj GGUF), downloaded and loaded with it: images in chat. */
  readonly mmproj?: { readonly url: string; readonly bytes: number };
}

const MB = 1024 * 1024;
const hf = (repo: string, file: string) => `https://huggingface.co/${repo}/resolve/main/${file}`;

/** Models offered in the picker, smallest first. */
export const CATALOGUE: readonly CatalogueModel[] = [
  {
    id: 'smollm2-360m-q8',
    label: 'SmolLM2 360M Instruct (Q8_0)',
    url: hf('HuggingFaceTB/SmolLM2-360M-Instruct-GGUF', 'smollm2-360m-instruct-q8_0.gguf'),
    bytes: 386 * MB,
    memoryBytes: 520 * MB,
    note: 'Tiny and fast; good for trying things out.',
  },
  {
    id: 'qwen2.5-0.5b-q4km',
    label: 'Qwen2.5 0.5B Instruct (Q4_K_M)',
    url: hf('Qwen/Qwen2.5-0.5B-Instruct-GGUF', 'qwen2.5-0.5b-instruct-q4_k_m.gguf'),
    bytes: 398 * MB,
    memoryBytes: 560 * MB,
    note: 'Multilingual, ChatML template.',
  },
  {
    // Unsloth's GGUF release of Qwen/Qwen3.5-0.8B (file name by its naming scheme; size from the pure Q4_K_M footprint,
    // ~416 MiB — not re-checked offline).
    id: 'qwen3.5-0.8b-q4km',
    label: 'Qwen3.5 0.8B (Q4_K_M)',
    url: hf('unsloth/Qwen3.5-0.8B-GGUF', 'Qwen3.5-0.8B-Q4_K_M.gguf'),
    bytes: 420 * MB,
    memoryBytes: 650 * MB,
    note: 'Hybrid: gated DeltaNet layers + 6 gated attention layers; small KV cache, ChatML template.',
  },
  {
    id: 'lfm2-1.2b-q4km',
    label: 'LFM2 1.2B (Q4_K_M)',
    url: hf('LiquidAI/LFM2-1.2B-GGUF', 'LFM2-1.2B-Q4_K_M.gguf'),
    bytes: 731 * MB,
    memoryBytes: 1000 * MB,
    note: 'Hybrid: short convolutions + 6 attention layers; fast prefill, ChatML-like template.',
  },
  {
    id: 'gemma3-1b-q4km',
    label: 'Gemma 3 1B IT (Q4_K_M)',
    url: hf('unsloth/gemma-3-1b-it-GGUF', 'gemma-3-1b-it-Q4_K_M.gguf'),
    bytes: 806 * MB,
    memoryBytes: 1100 * MB,
    note: 'Sliding-window attention; strong for its size.',
  },
  {
    id: 'llama3.2-1b-q4km',
    label: 'Llama 3.2 1B Instruct (Q4_K_M)',
    url: hf('bartowski/Llama-3.2-1B-Instruct-GGUF', 'Llama-3.2-1B-Instruct-Q4_K_M.gguf'),
    bytes: 808 * MB,
    memoryBytes: 1250 * MB,
    note: 'Llama 3 template, 128k vocabulary.',
  },
  {
    id: 'qwen2.5-1.5b-q4km',
    label: 'Qwen2.5 1.5B Instruct (Q4_K_M)',
    url: hf('Qwen/Qwen2.5-1.5B-Instruct-GGUF', 'qwen2.5-1.5b-instruct-q4_k_m.gguf'),
    bytes: 1117 * MB,
    memoryBytes: 1450 * MB,
    note: 'Noticeably smarter; needs a decent GPU.',
  },
  {
    id: 'smollm3-3b-q4km',
    label: 'SmolLM3 3B (Q4_K_M)',
    url: hf('unsloth/SmolLM3-3B-GGUF', 'SmolLM3-3B-Q4_K_M.gguf'),
    bytes: 1920 * MB,
    memoryBytes: 2350 * MB,
    note: 'Hybrid reasoning (think / no_think), 6 languages; every 4th layer without rope.',
  },
  {
    id: 'phi3.5-mini-q4km',
    label: 'Phi-3.5 mini Instruct (Q4_K_M)',
    url: hf('bartowski/Phi-3.5-mini-instruct-GGUF', 'Phi-3.5-mini-instruct-Q4_K_M.gguf'),
    bytes: 2390 * MB,
    memoryBytes: 3400 * MB,
    note: 'Largest dense model here; desktop GPUs.',
  },
  {
    // ggml-org's MXFP4 release of openai/gpt-oss-20b (~12.1 GB: MXFP4 experts); size not re-checked offline.
    id: 'gpt-oss-20b-mxfp4',
    label: 'gpt-oss 20B MoE (MXFP4)',
    url: hf('ggml-org/gpt-oss-20b-GGUF', 'gpt-oss-20b-mxfp4.gguf'),
    bytes: 11540 * MB,
    memoryBytes: 11900 * MB,
    note: 'Mixture of experts: 32 experts, 4 per token (3.6B active), attention sinks, harmony format with reasoning effort — needs a GPU with ≥ 14 GB (WebGPU only).',
  },
  {
    // Size from the public model card (~17.3 GB); not re-checked offline when this entry was added.
    id: 'qwen3-30b-a3b-q4km',
    label: 'Qwen3 30B-A3B MoE (Q4_K_M)',
    url: hf('unsloth/Qwen3-30B-A3B-GGUF', 'Qwen3-30B-A3B-Q4_K_M.gguf'),
    bytes: 17700 * MB,
    memoryBytes: 18200 * MB,
    note: 'Mixture of experts: 128 experts, 8 per token (3B active) — fast for its size, but the 17 GB of weights need a GPU with ≥ 20 GB (WebGPU only).',
  },
  {
    id: 'gemma4-e2b-q4km',
    label: 'Gemma 4 E2B IT (Q4_K_M)',
    url: hf('unsloth/gemma-4-E2B-it-GGUF', 'gemma-4-E2B-it-Q4_K_M.gguf'),
    bytes: 3110 * MB,
    memoryBytes: 3500 * MB,
    note: '2B active of 5B stored (per-layer embeddings), shared KV, thinking switch; desktop GPUs.',
  },
  {
    // ggml-org's release with its vision projector (SigLIP + gemma3 projector, f16): ~2.49 GB + ~851 MB.
    id: 'gemma3-4b-q4km-vision',
    label: 'Gemma 3 4B IT (Q4_K_M) + vision',
    url: hf('ggml-org/gemma-3-4b-it-GGUF', 'gemma-3-4b-it-Q4_K_M.gguf'),
    bytes: 2490 * MB,
    memoryBytes: 4000 * MB,
    note: 'Sees images: attach or paste a picture (its 851 MB vision projector is downloaded too); desktop GPUs.',
    mmproj: { url: hf('ggml-org/gemma-3-4b-it-GGUF', 'mmproj-model-f16.gguf'), bytes: 851 * MB },
  },
  {
    // ggml-org's release (llama.cpp docs/multimodal.md): SmolLM2-135M text model + SigLIP-B/16 with the idefics3
    // projector (512² tiles of 64 tokens + a global view), both Q8_0: ~145 MB + ~104 MB.
    id: 'smolvlm-256m-q8-vision',
    label: 'SmolVLM 256M Instruct (Q8_0) + vision',
    url: hf('ggml-org/SmolVLM-256M-Instruct-GGUF', 'SmolVLM-256M-Instruct-Q8_0.gguf'),
    bytes: 145 * MB,
    memoryBytes: 420 * MB,
    note: 'The smallest model that sees images: attach or paste a picture (its 104 MB vision projector is downloaded too).',
    mmproj: {
      url: hf('ggml-org/SmolVLM-256M-Instruct-GGUF', 'mmproj-SmolVLM-256M-Instruct-Q8_0.gguf'),
      bytes: 104 * MB,
    },
  },
  {
    // Unsloth's GGUF release of google/gemma-3n-E2B-it: 3,026,881,888 bytes (the exact size two public app catalogues
    // list for this file); text only here (its audio/vision towers are not in the GGUF).
    id: 'gemma3n-e2b-q4km',
    label: 'Gemma 3n E2B IT (Q4_K_M)',
    url: hf('unsloth/gemma-3n-E2B-it-GGUF', 'gemma-3n-E2B-it-Q4_K_M.gguf'),
    bytes: 2887 * MB,
    memoryBytes: 3250 * MB,
    note: '2B effective of 5B stored: per-layer embeddings, AltUp, LAuReL, KV sharing; Gemma 3 chat format; desktop GPUs.',
  },
  {
    // ggml-org's release (llama.cpp docs/multimodal.md): the qwen2vl text model (Q4_K_M, 1,929,901,056 bytes) and its
    // qwen2.5vl_merger projector (Q8_0, 844,757,728 bytes) — sizes and LFS sha256s (d02fe9b6…, 980c9b2f…) as several
    // public download manifests pin them for revision 5037fcf. The encoder runs on the chosen backend with its Q8_0
    // weights as stored; the memory figure (an estimate) is both files plus KV and the image's activations.
    id: 'qwen2.5-vl-3b-q4km-vision',
    label: 'Qwen2.5-VL 3B Instruct (Q4_K_M) + vision',
    url: hf('ggml-org/Qwen2.5-VL-3B-Instruct-GGUF', 'Qwen2.5-VL-3B-Instruct-Q4_K_M.gguf'),
    bytes: 1_929_901_056,
    memoryBytes: 3400 * MB,
    note: 'Sees images at their own resolution (M-RoPE positions); its vision projector is downloaded too. Large images take a while to encode; desktop GPUs.',
    mmproj: {
      url: hf('ggml-org/Qwen2.5-VL-3B-Instruct-GGUF', 'mmproj-Qwen2.5-VL-3B-Instruct-Q8_0.gguf'),
      bytes: 844_757_728,
    },
  },
];

/** How an embedding model wants its texts: what `embeddings.create` needs beyond the text (see its model card). */
export interface EmbeddingFormat {
  /** Put before a search query (an instruction, `query: `, `search_query: `…). */
  readonly queryPrefix: string;
  /** Put before each note (`passage: `, `search_document: `…), often nothing. */
  readonly documentPrefix: string;
  /** Put after every text (Qwen3-Embedding: `<|endoftext|>`). */
  readonly suffix: string;
  /** Pooling when the GGUF states none. */
  readonly pooling?: 'mean' | 'cls' | 'last';
}

/** An embedding model of the "search your notes" panel. */
export interface EmbeddingCatalogueModel extends CatalogueModel {
  readonly format: EmbeddingFormat;
}

/** The embedding model the notes panel offers (not a chat model: kept out of `CATALOGUE`). */
export const EMBEDDING_MODEL: EmbeddingCatalogueModel = {
  id: 'qwen3-embedding-0.6b-q8',
  label: 'Qwen3 Embedding 0.6B (Q8_0)',
  url: hf('Qwen/Qwen3-Embedding-0.6B-GGUF', 'Qwen3-Embedding-0.6B-Q8_0.gguf'),
  bytes: 639 * MB,
  memoryBytes: 760 * MB,
  note: 'Multilingual sentence embeddings (last-token pooling), 1024 dimensions.',
  format: {
    queryPrefix: 'Instruct: Given a question, retrieve the note that answers it\nQuery: ',
    documentPrefix: '',
    suffix: '<|endoftext|>',
    pooling: 'last',
  },
};

/** Formats a byte count for people (1.2 GB, 386 MB). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '?';
  if (bytes >= 1024 * MB) return `${(bytes / (1024 * MB)).toFixed(1)} GB`;
  if (bytes >= MB) return `${Math.round(bytes / MB)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} B`;
}
