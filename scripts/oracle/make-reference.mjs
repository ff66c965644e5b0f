#!/usr/bin/env node
// Reference JSON for a GGUF model from real llama.cpp (node-llama-cpp 3.22.1 prebuilt, CPU, 1 thread), in the format of
// ../shared/models/*.reference.json (see shared/models/README.md): per-position logits with the default F16 KV cache and
// with an F32 KV cache (flash attention off), greedy continuations, and — for models that are not all-F32 — the F32-KV
// logits of a copy llama.cpp itself dequantized to F32 (llama_model_quantize ALL_F32, run in a child process).
// With --kv-type q8_0,q4_0 (llama.cpp -ctk/-ctv) it adds logits_per_position_kv_<type>: K and V caches of that type,
// flash attention on (llama.cpp needs it for a quantized V cache). --positions 0,7,14 keeps only those rows of every
// logits array (small references to commit).
// Usage: node scripts/oracle/make-reference.mjs <model.gguf> [--prompt "Once upon a time"] [--out file.json]
//        [--greedy 30] [--no-dequant] [--kv-type q8_0,q4_0] [--positions 0,7]
//        (default out: <model without .gguf>.reference.json beside the model)

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

const here = dirname(fileURLToPath(import.meta.url));
const CONTEXT_SIZE = 256;

/** Shortest decimal string that parses back to the same float32 as `v`. */
export function f32Decimal(v) {
  const f = Math.fround(v);
  if (!Number.isFinite(f)) return f; // JSON cannot hold these; callers never see them for sane models
  for (let p = 1; p <= 9; p++) {
    const s = f.toPrecision(p);
    if (Math.fround(Number(s)) === f) return Number(s);
  }
  return f;
}

let llamaPromise;
const llama = () => (llamaPromise ??= getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error }));

/** Per-position logits (full vocab, float32 decimals) after feeding `tokens`, and a greedy continuation of `n`. */
async function runContext(model, tokens, kvF32, greedyN, kvType = null) {
  const typed = kvType ? kvType.toUpperCase() : null; // ggml type name: F16, Q8_0, Q4_0 …
  const context = await model.createContext({
    contextSize: CONTEXT_SIZE,
    threads: 1,
    batchSize: CONTEXT_SIZE,
    ...(kvF32 ? { experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32', flashAttention: false } : {}),
    ...(typed ? { experimentalKvCacheKeyType: typed, experimentalKvCacheValueType: typed, flashAttention: true } : {}),
  });
  try {
    const seq = context.getSequence();
    let nVocab = 0;
    const toRow = (out) => {
      nVocab = Math.max(nVocab, out.next.logits.size);
      const row = new Float32Array(out.next.logits.size);
      for (const [tok, logit] of out.next.logits) row[tok] = logit;
      return row;
    };
    const outs = await seq.controlledEvaluate(tokens.map((t) => [t, { generateNext: { logits: true } }]));
    const rows = outs.map((o) => toRow(o));
    const greedy = [];
    let last = rows[rows.length - 1];
    for (let i = 0; i < greedyN; i++) {
      let best = 0;
      for (let t = 1; t < last.length; t++) if (last[t] > last[best]) best = t;
      greedy.push(best);
      if (i + 1 < greedyN)
        last = toRow((await seq.controlledEvaluate([[best, { generateNext: { logits: true } }]]))[0]);
    }
    return { rows, greedy, nVocab };
  } finally {
    await context.dispose();
  }
}

/** True when every tensor of the GGUF at `path` is F32 (then no dequant_f32 copy is needed). */
async function allF32(model) {
  const info = model.fileInfo;
  return info.tensorInfo?.every((t) => t.ggmlType === 0) ?? false;
}

/**
 * Builds the reference object for `modelPath`. Options: prompt, greedy (tokens, default 30), dequant (default true).
 */
export async function makeReference(
  modelPath,
  { prompt = 'Once upon a time', greedy = 30, dequant = true, kvTypes = [], positions = null } = {},
) {
  const l = await llama();
  const model = await l.loadModel({ modelPath, gpuLayers: 0 });
  const addBos = model.tokens.shouldPrependBosToken && model.tokens.bos != null;
  const promptTokens = [...model.tokenize(prompt, false)];
  const evalInput = addBos ? [model.tokens.bos, ...promptTokens] : promptTokens;
  const f16 = await runContext(model, evalInput, false, greedy);
  const f32 = await runContext(model, evalInput, true, greedy);
  const typed = [];
  for (const t of kvTypes) typed.push([t, await runContext(model, evalInput, false, 0, t)]);
  const f16Text = model.detokenize(f16.greedy);
  const f32Text = model.detokenize(f32.greedy);
  const needDequant = dequant && !(await allF32(model));
  await model.dispose();

  const kept = (rows) => (positions ? positions.map((p) => rows[p]) : rows);
  const rowsJson = (rows) => kept(rows).map((r) => Array.from(r, f32Decimal));
  const ref = {
    model: basename(modelPath),
    model_sha256: createHash('sha256').update(readFileSync(modelPath)).digest('hex'),
    producer: {
      tool: 'node-llama-cpp 3.22.1 (prebuilt @node-llama-cpp/linux-x64, CPU backend) via webgguf scripts/oracle/make-reference.mjs',
      llama_cpp: (({ llamaCppGithubRepo, tag }) => ({ repo: llamaCppGithubRepo, release: tag }))(
        JSON.parse(readFileSync(join(here, 'node_modules/node-llama-cpp/llama/llama.cpp.info.json'), 'utf8')),
      ),
      threads: 1,
      context_size: CONTEXT_SIZE,
    },
    prompt,
    add_bos: addBos,
    prompt_tokens_no_bos: promptTokens,
    eval_input: evalInput,
    n_vocab: f32.nVocab,
    note:
      'logits_per_position[i] = logits after feeding eval_input[0..i] (predicts token i+1), the prompt fed as one batch. ' +
      '*_kv_f16 = llama.cpp default context (F16 KV cache, flash attention auto); *_kv_f32 = F32 KV cache, flash-attn off; ' +
      '*_dequant_f32 = F32-KV rows of a copy llama.cpp dequantized to F32 (llama_model_quantize ALL_F32). ' +
      '*_kv_<type> (q8_0, q4_0 …) = K and V caches of that type, flash attention on; `positions`, when present, lists ' +
      'the eval positions whose rows every logits array keeps. ' +
      'Values are float32 written as the shortest decimal that round-trips through float32 (Math.fround restores them).',
    argmax_per_position: f16.rows.map((r) => r.reduce((b, v, i) => (v > r[b] ? i : b), 0)),
    logits_per_position_kv_f16: rowsJson(f16.rows),
    logits_per_position_kv_f32: rowsJson(f32.rows),
    ...(positions ? { positions } : {}),
    ...Object.fromEntries(typed.map(([t, r]) => [`logits_per_position_kv_${t}`, rowsJson(r.rows)])),
    greedy_kv_f16: { n: greedy, tokens: f16.greedy, text: f16Text },
    greedy_kv_f32: { n: greedy, tokens: f32.greedy, text: f32Text },
  };
  if (needDequant) {
    const dir = mkdtempSync(join(tmpdir(), 'webgguf-oracle-'));
    try {
      const f32Path = join(dir, 'all-f32.gguf');
      const r = spawnSync(process.execPath, [join(here, 'quantize-model.mjs'), modelPath, f32Path, 'ALL_F32'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      if (r.status !== 0) throw new Error(`oracle: ALL_F32 copy failed: ${r.stderr.toString().slice(-2000)}`);
      const m2 = await l.loadModel({ modelPath: f32Path, gpuLayers: 0 });
      const deq = await runContext(m2, evalInput, true, 0);
      await m2.dispose();
      ref.logits_per_position_kv_f32_dequant_f32 = rowsJson(deq.rows);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return ref;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const modelPath = args.find(
    (a, i) =>
      !a.startsWith('--') && !['--prompt', '--out', '--greedy', '--kv-type', '--positions'].includes(args[i - 1]),
  );
  if (!modelPath) {
    console.error(
      'usage: node scripts/oracle/make-reference.mjs <model.gguf> [--prompt "…"] [--out file.json] [--greedy 30] [--no-dequant] [--kv-type q8_0,q4_0] [--positions 0,7]',
    );
    process.exit(2);
  }
  const ref = await makeReference(resolve(modelPath), {
    prompt: opt('--prompt') ?? 'Once upon a time',
    greedy: Number(opt('--greedy') ?? 30),
    dequant: !args.includes('--no-dequant'),
    kvTypes: opt('--kv-type')?.split(',') ?? [],
    positions: opt('--positions')?.split(',').map(Number) ?? null,
  });
  const out = resolve(opt('--out') ?? modelPath.replace(/\.gguf$/, '') + '.reference.json');
  writeFileSync(out, JSON.stringify(ref) + '\n');
  console.log(out);
}
