/**
 * The benchmark page's script (bundled by browser-bench.ts with Vite): exposes `window.webggufBench` with one
 * function per runtime — our WASM / WebGPU through the same `measureModel` as Node, and wllama (its ESM and wasm
 * served locally) timed by llama.cpp's own server timings — each fetching the model once into a Blob.
 */

import { createWasmOps } from '../../../src/backend/wasm/index.js';
import { BlobByteSource } from '../../../src/io/blob-source.js';
import { median, round, type RunResult, type Workload } from '../bench-types.js';
import { measureModel, wasmHeapBytes, type MeasureEnv } from '../measure-model.js';
import { createTimedWebGpuOps } from '../webgpu-timed-ops.js';
import { cachedLoad, storeModel } from './page-cached-load.js';
import { choices } from './page-choices.js';
import { embeddings } from './page-embeddings.js';

/** What the Node side passes to each function. */
export interface PageSpec {
  readonly modelUrl: string;
  readonly threads: number;
  readonly workload: Workload;
  readonly wasmBaseUrl: string;
  readonly wllamaUrl: string;
  readonly profileSteps?: number;
  readonly profilePrefill?: boolean;
  /** WebGPU: breakdown from encode time even where timestamps are offered. */
  readonly noGpuTimestamps?: boolean;
}

let cachedBlob: { url: string; blob: Blob } | null = null;

async function modelBlob(url: string): Promise<Blob> {
  if (cachedBlob?.url === url) return cachedBlob.blob;
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fetching ${url}: HTTP ${res.status}`);
  cachedBlob = { url, blob: await res.blob() };
  return cachedBlob.blob;
}

const PAGE_ENV: MeasureEnv = {
  cpuMs: () => performance.now(),
  peakRssMiB: () => {
    const m = (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory;
    return m ? m.usedJSHeapSize / 2 ** 20 : NaN;
  },
  loadAvg: () => NaN,
  notes: ['browser: CPU time unavailable (wall time used); memory = JS heap only'],
};

async function ours(spec: PageSpec, backend: 'wasm' | 'webgpu'): Promise<RunResult> {
  const blob = await modelBlob(spec.modelUrl);
  return measureModel({
    modelName: spec.modelUrl,
    openSource: async () => new BlobByteSource(blob, 'model.gguf'),
    createOps: async (notes) => {
      if (backend === 'webgpu') return createTimedWebGpuOps(spec.noGpuTimestamps ? { noTimestamps: true } : {}, notes);
      if (!crossOriginIsolated && spec.threads > 1) notes.push('page not cross-origin isolated: 1 thread');
      const ops = await createWasmOps({ threads: spec.threads, wasmBaseUrl: spec.wasmBaseUrl });
      return { ops, runtime: 'webgguf-wasm', heapBytes: () => wasmHeapBytes(ops) };
    },
    threads: spec.threads,
    workload: spec.workload,
    ...(spec.profileSteps !== undefined ? { profileSteps: spec.profileSteps } : {}),
    ...(spec.profilePrefill !== undefined ? { profilePrefill: spec.profilePrefill } : {}),
    env: PAGE_ENV,
  });
}

/** The slice of wllama 3's API used here. */
interface WllamaLike {
  loadModel(blobs: Blob[], params: Record<string, unknown>): Promise<void>;
  createCompletion(params: Record<string, unknown>): Promise<void>;
  exit(): Promise<void>;
}
interface Timings {
  prompt_n: number;
  prompt_ms: number;
  prompt_per_second: number;
  predicted_n: number;
  predicted_ms: number;
  predicted_per_second: number;
}

/** A prompt of about n tokens: " the" repeated (one token each in BPE vocabularies such as Qwen's). */
function textOfTokens(n: number): string {
  return ' the'.repeat(n);
}

async function wllama(spec: PageSpec): Promise<RunResult> {
  const mod = (await import(/* @vite-ignore */ `${spec.wllamaUrl}index.js`)) as {
    Wllama: new (paths: Record<string, string>, cfg?: Record<string, unknown>) => WllamaLike;
  };
  const blob = await modelBlob(spec.modelUrl);
  const t0 = performance.now();
  const w = new mod.Wllama({ default: `${spec.wllamaUrl}wasm/wllama.wasm` }, { suppressNativeLog: true });
  const { promptLengths, decodeTokens } = spec.workload;
  await w.loadModel([blob], {
    n_threads: spec.threads,
    n_ctx: Math.max(...promptLengths) + decodeTokens + 64,
    n_batch: 512,
    n_gpu_layers: 0,
  });
  const loadMs = performance.now() - t0;
  const complete = async (prompt: string, maxTokens: number): Promise<{ t: Timings; wall: number }> => {
    let timings: Timings | null = null;
    const s = performance.now();
    await w.createCompletion({
      prompt,
      max_tokens: maxTokens,
      temperature: 0,
      ignore_eos: true,
      cache_prompt: false,
      stream: true,
      onData: (c: { timings?: Timings }) => {
        if (c.timings) timings = c.timings;
      },
    });
    const wall = performance.now() - s;
    if (timings === null) throw new Error('wllama returned no timings');
    return { t: timings, wall };
  };
  try {
    const w0 = performance.now();
    await complete(textOfTokens(8), 4);
    const warmupMs = performance.now() - w0;
    const prefill: Record<string, number> = {};
    let ttftMs = 0;
    for (const [i, n] of promptLengths.entries()) {
      const { t } = await complete(textOfTokens(n - 1), 1);
      prefill[String(n)] = round(t.prompt_per_second, 2);
      if (i === 0) ttftMs = round(t.prompt_ms + t.predicted_ms, 1);
    }
    const { t } = await complete(textOfTokens(promptLengths[0] - 1), decodeTokens + 1);
    const perTok = t.predicted_ms / Math.max(1, t.predicted_n);
    return {
      runtime: 'wllama',
      backend: 'wllama 3.13.0 (llama.cpp wasm)',
      threads: spec.threads,
      model: spec.modelUrl,
      loadMs: { parse: 0, upload: round(loadMs, 1), total: round(loadMs, 1) },
      warmupMs: round(warmupMs, 1),
      prefillTokPerS: prefill,
      ttftMs,
      decodeTokPerS: round(t.predicted_per_second, 3),
      decodeCpuMsPerToken: round(perTok, 2),
      decodeStepMs: { median: round(perTok, 2), p10: round(perTok, 2), p90: round(perTok, 2) },
      breakdownMs: null,
      breakdownSource: 'n/a (peer; llama-server timings)',
      memoryMiB: { peakRss: round(PAGE_ENV.peakRssMiB(), 1), backend: null },
      loadAvg: [NaN, NaN],
      notes: [
        `prompt text ' the'×n (${t.prompt_n} tokens counted by wllama); decode = ${t.predicted_n} tokens; CPU time = wall`,
      ],
    };
  } finally {
    await w.exit();
  }
}

declare global {
  interface Window {
    webggufBench: {
      ours(spec: PageSpec, backend: 'wasm' | 'webgpu'): Promise<RunResult>;
      wllama(spec: PageSpec): Promise<RunResult>;
      cachedLoad: typeof cachedLoad;
      storeModel: typeof storeModel;
      median: typeof median;
      embeddings: typeof embeddings;
      choices: typeof choices;
    };
  }
}

window.webggufBench = { ours, wllama, cachedLoad, storeModel, median, embeddings, choices };
document.title = 'webgguf bench ready';
