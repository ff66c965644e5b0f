/**
 * The KV cache type an engine stores when `EngineOptions.kvType` names none. On the WASM backend, decoder models get
 * f16 — llama.cpp's default (`-ctk/-ctv f16`), half the memory of f32, and since the f16 attention widens each
 * layer's K/V once per call for the f32 kernel (src/backend/wasm/attention-widen.ts) at least as fast at long
 * contexts (BENCHMARKS.md, "f16 KV as the WASM default"). Encoders and decoders with a pooling head (embeddings,
 * rerank: EmbeddingGemma, Qwen3-Embedding: llama.cpp gives encoders and EmbeddingGemma no KV cache at all, so f32 is
 * its arithmetic there, and a whole-input non-causal prefill is where f16 K/V costs most here) and the other backends keep the backend's own type (f32 on cpu, f16 or f32 on WebGPU by
 * device). Pass `kvType: 'f32'` for the exact f32 path on WASM.
 */

import type { KvType } from '../backend/kv-type.js';
import type { GgufFile } from '../gguf/types.js';
import { getArchitecture } from '../model/arch/index.js';
import { readModelConfig } from '../model/load.js';

/** See the file header: `undefined` leaves the choice to the backend (`Ops.createKvCache`). */
export function defaultKvType(backend: string, gguf: GgufFile): KvType | undefined {
  if (backend !== 'wasm') return undefined;
  const config = readModelConfig(gguf);
  return getArchitecture(config.arch).encoder || config.poolingType !== 'none' ? undefined : 'f16';
}
