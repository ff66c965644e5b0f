#!/usr/bin/env node
// Context-shift reference from real llama.cpp (node-llama-cpp, CPU, 1 thread, F32 KV cache, flash attention off):
// evaluate `tokens`, then erase positions [nKeep, nKeep + nDiscard) — node-llama-cpp's eraseContextTokenRanges calls
// llama_memory_seq_rm and llama_memory_seq_add (the later cells move down; llama.cpp re-rotates their keys with its
// K-shift graph at the next decode) — then evaluate `next` and record its logits (`logits_after_shift`), and the
// logits of `next` evaluated after all of `tokens` without a shift (`logits_without_shift`).
// Usage: node scripts/oracle/make-shift-reference.mjs <model.gguf> --tokens 1,2,3,… --keep 1 --discard 6 --next 42
//        [--kv-type f32|f16|q8_0|q4_0] [--out file.json]

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import { f32Decimal } from './make-reference.mjs';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const modelPath = args[0];
const tokens = opt('--tokens')?.split(',').map(Number);
const nKeep = Number(opt('--keep'));
const nDiscard = Number(opt('--discard'));
const next = Number(opt('--next'));
const kvType = (opt('--kv-type') ?? 'f32').toUpperCase();
if (!modelPath || !tokens || !(nKeep >= 1) || !(nDiscard >= 1) || !Number.isInteger(next)) {
  console.error(
    'usage: node scripts/oracle/make-shift-reference.mjs <model.gguf> --tokens 1,2,… --keep 1 --discard 6 --next 42 [--kv-type f32] [--out f.json]',
  );
  process.exit(2);
}

const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: resolve(modelPath), gpuLayers: 0 });

/** Logits of `next` after `tokens`, with the shift first when `shift`. */
async function run(shift) {
  const context = await model.createContext({
    contextSize: 256,
    threads: 1,
    batchSize: 256,
    experimentalKvCacheKeyType: kvType,
    experimentalKvCacheValueType: kvType,
    flashAttention: kvType !== 'F32' && kvType !== 'F16',
  });
  try {
    const seq = context.getSequence();
    await seq.controlledEvaluate(tokens.map((t) => [t, {}]));
    if (shift) await seq.eraseContextTokenRanges([{ start: nKeep, end: nKeep + nDiscard }]);
    const [out] = await seq.controlledEvaluate([[next, { generateNext: { logits: true } }]]);
    const row = new Array(out.next.logits.size);
    for (const [tok, logit] of out.next.logits) row[tok] = f32Decimal(logit);
    return row;
  } finally {
    await context.dispose();
  }
}

const ref = {
  model: basename(modelPath),
  model_sha256: createHash('sha256').update(readFileSync(modelPath)).digest('hex'),
  producer: 'node-llama-cpp (prebuilt, CPU, 1 thread) via webgguf scripts/oracle/make-shift-reference.mjs',
  kv_type: kvType.toLowerCase(),
  tokens,
  n_keep: nKeep,
  n_discard: nDiscard,
  next,
  note:
    'logits_after_shift: logits of `next` at position tokens.length − n_discard after erasing positions ' +
    '[n_keep, n_keep + n_discard) (llama_memory_seq_rm + llama_memory_seq_add, K-shift); logits_without_shift: ' +
    'logits of `next` at position tokens.length with nothing erased.',
  logits_after_shift: await run(true),
  logits_without_shift: await run(false),
};
await model.dispose();
const out = resolve(opt('--out') ?? `${modelPath.replace(/\.gguf$/, '')}.shift-reference.json`);
writeFileSync(out, `${JSON.stringify(ref)}\n`);
console.log(out);
