/**
 * `npm run bench -- embeddings [--inputs 256] [--min 64] [--max 512] [--threads 1] [--backends wasm,webgpu,chromium-wasm]
 * [--quant q8_0] [--seed 1] [--arch qwen3|bert|gemma-embedding] [--packing-ab R] [--profile]`: embeddings/s of
 * `engine.embeddings.create` against llama.cpp's embedding path (node-llama-cpp's embedding context, CPU) on the same
 * synthetic GGUF and token ids, per wall second and per CPU second of the process (steadier on a shared machine; both
 * runners compute on the process's threads). The model is a qwen3 stack with 'last' pooling shaped like bge-small
 * (384 wide, 12 layers, FFN 1536: ~29 M parameters), or with `--arch bert` a bge-small-shaped bert encoder (cls
 * pooling, 33 M parameters), or with `--arch gemma-embedding` an EmbeddingGemma-300M-shaped model (mean pooling, the
 * dense head). Inputs have random lengths in [min, max]. Never gating; prints a table and JSON. `--packing-ab R` instead
 * compares, in one engine, the inputs in one request (packed into few passes by an encoder) with one request per
 * input, over R alternated rounds; `--profile` instead splits our first backend's CPU time by op
 * (embedding-profile.ts), without llama.cpp.
 */

import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createEngine } from '../../src/api/create-engine.js';
import { mulberry32, promptTokenIds } from '../../scripts/deterministic-random.mjs';
import { parseQuant, REPO_ROOT, writeSyntheticModel } from '../../scripts/synthetic-model.js';
import { nodeGpu } from './node-gpu.js';

/** The benchmark model: bge-small's width, depth and FFN on qwen3 layers (head size 64, no GQA). */
const SHAPE = { nEmbd: 384, nHead: 6, nHeadKv: 6, headDim: 64, nFf: 1536, nLayer: 12 };
/** llama.cpp's pooling_type 3 ('last'). */
const POOLING_LAST = 3;
/** `--arch bert`: bge-small itself (12 heads of 32, its 30522-token vocabulary: 33 M parameters), cls pooling. */
const BERT_SHAPE = { nEmbd: 384, nHead: 12, nHeadKv: 12, headDim: 32, nFf: 1536, nLayer: 12, nVocab: 30522 };
/** llama.cpp's pooling_type 2 ('cls'). */
const POOLING_CLS = 2;
/**
 * `--arch gemma-embedding`: EmbeddingGemma-300M (768 wide, 24 layers of 3 heads of 256 over one KV head, FFN 1152,
 * 262144-token vocabulary, symmetric sliding window 512 on 5 of 6 layers, dense head 768 → 3072 → 768), mean pooling.
 */
const GEMMA_SHAPE = {
  nEmbd: 768,
  nHead: 3,
  nHeadKv: 1,
  headDim: 256,
  nFf: 1152,
  nLayer: 24,
  nVocab: 262144,
  extra: { swa: 512, dense: 3072 },
};
/** llama.cpp's pooling_type 1 ('mean'). */
const POOLING_MEAN = 1;

interface EmbeddingBenchResult {
  readonly runner: string;
  readonly threads: number;
  readonly inputs: number;
  readonly tokens: number;
  readonly seconds: number;
  /** Process CPU seconds (all threads) over the timed part. */
  readonly cpuSeconds: number;
  readonly embeddingsPerSecond: number;
  readonly tokensPerSecond: number;
  readonly embeddingsPerCpuSecond: number;
}

/** The result record of `inputs` embedded in `seconds` wall and `cpuSeconds` of process CPU time. */
function resultOf(
  runner: string,
  threads: number,
  inputs: number,
  tokens: number,
  seconds: number,
  cpuSeconds: number,
): EmbeddingBenchResult {
  return {
    runner,
    threads,
    inputs,
    tokens,
    seconds,
    cpuSeconds,
    embeddingsPerSecond: inputs / seconds,
    tokensPerSecond: tokens / seconds,
    embeddingsPerCpuSecond: inputs / cpuSeconds,
  };
}

/** Process CPU seconds since `c0` (a `process.cpuUsage()`). */
function cpuSince(c0: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
}

function flag(args: readonly string[], name: string, fallback: string): string {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1]! : fallback;
}

/** `n` token-id arrays of lengths uniform in [min, max] (ids in 10…vocab−1, deterministic from `seed`). */
function benchInputs(n: number, min: number, max: number, vocab: number, seed: number): number[][] {
  const rnd = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => {
    const len = min + Math.floor(rnd() * (max - min + 1));
    return promptTokenIds(len, seed * 1000 + i, 10, vocab);
  });
}

async function runOurs(
  model: string,
  backend: 'wasm' | 'webgpu' | 'cpu',
  threads: number,
  inputs: number[][],
  contextLength: number,
): Promise<{ result: EmbeddingBenchResult; first: number[] }> {
  const engine = await createEngine({
    model,
    backend,
    threads,
    contextLength,
    slots: 1,
    warmup: false,
    ...(backend === 'webgpu' ? { gpu: await nodeGpu() } : {}),
  });
  try {
    await engine.embeddings.create({ input: [inputs[0]!.slice(0, 8)] }); // pipelines, scratch: not timed
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await engine.embeddings.create({ input: inputs });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSince(c0);
    const runner = `webgguf ${engine.info.backend.description}`;
    return {
      result: resultOf(runner, threads, inputs.length, r.usage.prompt_tokens, seconds, cpu),
      first: r.data[0]!.embedding as number[],
    };
  } finally {
    await engine.unload();
  }
}

/** Our WASM in headless Chromium (browser-embeddings.ts): wall time stands in for CPU time, as in the browser bench. */
async function runChromium(
  model: string,
  threads: number,
  inputs: number[][],
  contextLength: number,
): Promise<{ result: EmbeddingBenchResult; first: number[] }> {
  const { runBrowserEmbeddings } = await import('./browser-embeddings.js');
  const r = await runBrowserEmbeddings(model, threads, inputs, contextLength);
  const runner = `webgguf ${r.backend} (chromium)`;
  return { result: resultOf(runner, threads, inputs.length, r.tokens, r.seconds, r.seconds), first: r.first };
}

/**
 * `--packing-ab R`: in one engine, R alternated rounds of the inputs in one request (packed into few passes) and of one
 * request per input (one pass each); embeddings/s of each round, same process and model, so the load of a shared
 * machine hits both alike.
 */
async function runPackingAb(
  model: string,
  backend: 'wasm' | 'webgpu' | 'cpu',
  threads: number,
  inputs: number[][],
  contextLength: number,
  rounds: number,
): Promise<void> {
  const engine = await createEngine({
    model,
    backend,
    threads,
    contextLength,
    slots: 1,
    warmup: false,
    ...(backend === 'webgpu' ? { gpu: await nodeGpu() } : {}),
  });
  try {
    await engine.embeddings.create({ input: [inputs[0]!.slice(0, 8)] });
    // Embeddings per wall second and per CPU second of this process (1 thread: less sensitive to a shared machine).
    const rate = async (run: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await run();
      const cpu = process.cpuUsage(c0);
      return {
        wall: inputs.length / ((performance.now() - t0) / 1000),
        cpu: inputs.length / ((cpu.user + cpu.system) / 1e6),
      };
    };
    const packed: { wall: number; cpu: number }[] = [];
    const single: { wall: number; cpu: number }[] = [];
    const runPacked = async () => packed.push(await rate(() => engine.embeddings.create({ input: inputs })));
    const runSingle = async () =>
      single.push(
        await rate(async () => {
          for (const ids of inputs) await engine.embeddings.create({ input: [ids] });
        }),
      );
    for (let r = 0; r < rounds; r++) {
      // Alternated order, so a load that rises or falls within a round favours neither.
      if (r % 2 === 0) await runPacked().then(runSingle);
      else await runSingle().then(runPacked);
      const [p, o] = [packed[r]!, single[r]!];
      console.log(
        `round ${r + 1}: packed ${p.wall.toFixed(2)} /s (${p.cpu.toFixed(2)} /CPU-s), one per pass ` +
          `${o.wall.toFixed(2)} /s (${o.cpu.toFixed(2)} /CPU-s): ${(p.wall / o.wall).toFixed(2)}× wall, ` +
          `${(p.cpu / o.cpu).toFixed(2)}× CPU`,
      );
    }
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    const mp = median(packed.map((x) => x.cpu));
    const ms = median(single.map((x) => x.cpu));
    console.log(
      `${engine.info.backend.description}: median packed ${mp.toFixed(2)}, one per pass ${ms.toFixed(2)} ` +
        `embeddings/CPU-s (${(mp / ms).toFixed(2)}×)`,
    );
    console.log(
      JSON.stringify({ kind: 'embeddings-packing-ab', backend, threads, inputs: inputs.length, packed, single }),
    );
  } finally {
    await engine.unload();
  }
}

/** The part of node-llama-cpp this benchmark calls. */
interface LlamaLib {
  getLlama(o: { gpu: false; build: 'never'; logLevel: string }): Promise<{
    loadModel(o: { modelPath: string; gpuLayers: number }): Promise<{
      createEmbeddingContext(o: { contextSize: number; batchSize: number; threads: number }): Promise<{
        getEmbeddingFor(tokens: readonly number[]): Promise<{ readonly vector: readonly number[] }>;
        dispose(): Promise<void>;
      }>;
      dispose(): Promise<void>;
    }>;
  }>;
  readonly LlamaLogLevel: { readonly error: string };
}

async function runLlamaCpp(
  model: string,
  threads: number,
  inputs: number[][],
  contextLength: number,
): Promise<{ result: EmbeddingBenchResult; first: number[] }> {
  const entry = path.join(REPO_ROOT, 'scripts', 'oracle', 'node_modules', 'node-llama-cpp', 'dist', 'index.js');
  if (!existsSync(entry))
    throw new Error('llama.cpp: node-llama-cpp is not installed (cd scripts/oracle && npm install)');
  // node-llama-cpp lives in the dev-only oracle folder (not a dependency): typed here by the little this uses.
  const lib = (await import(pathToFileURL(entry).href)) as LlamaLib;
  const llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: lib.LlamaLogLevel.error });
  const m = await llama.loadModel({ modelPath: model, gpuLayers: 0 });
  const ctx = await m.createEmbeddingContext({ contextSize: contextLength, batchSize: contextLength, threads });
  try {
    await ctx.getEmbeddingFor(inputs[0]!.slice(0, 8));
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let first: readonly number[] = [];
    let tokens = 0;
    for (const [i, ids] of inputs.entries()) {
      const e = await ctx.getEmbeddingFor(ids);
      if (i === 0) first = e.vector;
      tokens += ids.length;
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSince(c0);
    const runner = `llama.cpp cpu (node-llama-cpp embedding context)`;
    return { result: resultOf(runner, threads, inputs.length, tokens, seconds, cpu), first: [...first] };
  } finally {
    await ctx.dispose();
    await m.dispose();
  }
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

/** Entry of `npm run bench -- embeddings …`; returns the exit status. */
export async function runEmbeddingBench(args: readonly string[]): Promise<number> {
  const n = Number(flag(args, '--inputs', '256'));
  const min = Number(flag(args, '--min', '64'));
  const max = Number(flag(args, '--max', '512'));
  const threads = Number(flag(args, '--threads', '1'));
  const seed = Number(flag(args, '--seed', '1'));
  const quant = flag(args, '--quant', 'q8_0');
  const backends = flag(args, '--backends', 'wasm').split(',') as ('wasm' | 'webgpu' | 'cpu' | 'chromium-wasm')[];
  const dir = path.join(REPO_ROOT, '.cache', 'bench');
  mkdirSync(dir, { recursive: true });
  const arch = flag(args, '--arch', 'qwen3');
  const bert = arch === 'bert';
  const gemma = arch === 'gemma-embedding';
  if (!bert && !gemma && arch !== 'qwen3') throw new Error(`--arch ${arch}: expected qwen3, bert or gemma-embedding`);
  const shapeName = gemma ? 'embeddinggemma-300m-shape' : 'bge-small-shape';
  const model = path.join(dir, `embedding-${arch}-${shapeName}-${quant}-s${seed}.gguf`);
  const vocab = bert ? BERT_SHAPE.nVocab : gemma ? GEMMA_SHAPE.nVocab : 2226;
  if (!existsSync(model)) {
    await writeSyntheticModel({
      arch,
      quant: parseQuant(quant),
      shape: bert
        ? { ...BERT_SHAPE, tied: true }
        : gemma
          ? { ...GEMMA_SHAPE, tied: true }
          : { ...SHAPE, nVocab: vocab, tied: true },
      seed,
      out: model,
      pooling: bert ? POOLING_CLS : gemma ? POOLING_MEAN : POOLING_LAST,
      ...(bert ? { causal: false } : {}),
    });
  }
  const inputs = benchInputs(n, min, max, vocab, seed);
  const contextLength = max + 8;
  if (args.includes('--profile')) {
    const b = backends[0] === 'cpu' ? 'cpu' : 'wasm';
    await (await import('./embedding-profile.js')).runEmbeddingProfile(model, b, threads, inputs, contextLength);
    return 0;
  }
  const abRounds = Number(flag(args, '--packing-ab', '0'));
  if (abRounds > 0) {
    for (const b of backends)
      if (b !== 'chromium-wasm') await runPackingAb(model, b, threads, inputs, contextLength, abRounds);
    return 0;
  }
  const results: EmbeddingBenchResult[] = [];
  const llama = await runLlamaCpp(model, threads, inputs, contextLength);
  results.push(llama.result);
  for (const b of backends) {
    const ours =
      b === 'chromium-wasm'
        ? await runChromium(model, threads, inputs, contextLength)
        : await runOurs(model, b, threads, inputs, contextLength);
    results.push(ours.result);
    console.error(
      `${ours.result.runner}: cosine to llama.cpp's first embedding ${cosine(ours.first, llama.first).toFixed(6)}`,
    );
  }
  console.log(`embeddings: ${n} inputs of ${min}–${max} tokens, ${path.basename(model)}, ${threads} thread(s)`);
  for (const r of results) {
    const ratio = r.embeddingsPerSecond / llama.result.embeddingsPerSecond;
    const cpuRatio = r.embeddingsPerCpuSecond / llama.result.embeddingsPerCpuSecond;
    console.log(
      `${r.runner.padEnd(52)} ${r.embeddingsPerSecond.toFixed(2).padStart(8)} embeddings/s ` +
        `${r.tokensPerSecond.toFixed(0).padStart(7)} tokens/s  ${ratio.toFixed(2)}× llama.cpp (wall); ` +
        `${r.embeddingsPerCpuSecond.toFixed(2).padStart(8)} embeddings/CPU-s  ${cpuRatio.toFixed(2)}× (CPU)`,
    );
  }
  console.log(JSON.stringify({ kind: 'embeddings', inputs: n, min, max, threads, quant, results }));
  return 0;
}
