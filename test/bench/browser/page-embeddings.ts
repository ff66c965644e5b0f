/**
 * Embeddings in the benchmark page (test/bench/browser-embeddings.ts drives it): `engine.embeddings.create` over the
 * same token ids as the Node runs, our WASM backend with the kernel build this Chromium picks, wall-timed (a page has
 * no process CPU clock).
 */

import { createEngine } from '../../../src/api/create-engine.js';

/** What the Node side passes. */
export interface EmbeddingsSpec {
  readonly modelUrl: string;
  readonly threads: number;
  readonly inputs: readonly (readonly number[])[];
  readonly contextLength: number;
}

/** One timed request: wall seconds, tokens, the backend's description and the first embedding. */
export interface EmbeddingsRun {
  readonly seconds: number;
  readonly tokens: number;
  readonly backend: string;
  readonly first: number[];
}

/** Loads the model from its URL (the page fetches it), embeds a short warm-up input untimed, then all inputs. */
export async function embeddings(spec: EmbeddingsSpec): Promise<EmbeddingsRun> {
  const res = await fetch(spec.modelUrl);
  if (!res.ok) throw new Error(`fetching ${spec.modelUrl}: HTTP ${res.status}`);
  const blob = await res.blob();
  const engine = await createEngine({
    model: new File([blob], 'model.gguf'),
    backend: 'wasm',
    threads: spec.threads,
    contextLength: spec.contextLength,
    slots: 1,
    warmup: false,
  });
  try {
    const input = spec.inputs.map((ids) => [...ids]);
    await engine.embeddings.create({ input: [input[0]!.slice(0, 8)] }); // scratch and tier-up: not timed
    const t0 = performance.now();
    const r = await engine.embeddings.create({ input });
    const seconds = (performance.now() - t0) / 1000;
    return {
      seconds,
      tokens: r.usage.prompt_tokens,
      backend: engine.info.backend.description,
      first: r.data[0]!.embedding as number[],
    };
  } finally {
    await engine.unload();
  }
}
