#!/usr/bin/env node
// Smoke check of a GGUF in real llama.cpp (node-llama-cpp prebuilt, CPU): loads it, evaluates a prompt with an F32 KV
// cache, reports whether every logit is finite, the top token per position, and greedy decode speed.
// Usage: node scripts/oracle/check-model.mjs <model.gguf> [--prompt "…"] [--decode 16] [--threads 1] [--json]

import { resolve } from 'node:path';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

const args = process.argv.slice(2);
const opt = (n) => {
  const i = args.indexOf(n);
  return i >= 0 ? args[i + 1] : undefined;
};
const modelPath = args.find(
  (a, i) => !a.startsWith('--') && !['--prompt', '--decode', '--threads'].includes(args[i - 1]),
);
if (!modelPath) {
  console.error(
    'usage: node scripts/oracle/check-model.mjs <model.gguf> [--prompt "…"] [--decode 16] [--threads 1] [--json]',
  );
  process.exit(2);
}
const prompt = opt('--prompt') ?? 'Once upon a time, there was a robot.';
const nDecode = Number(opt('--decode') ?? 16);
const threads = Number(opt('--threads') ?? 1);

const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: resolve(modelPath), gpuLayers: 0 });
const context = await model.createContext({
  contextSize: 512,
  threads,
  experimentalKvCacheKeyType: 'F32',
  experimentalKvCacheValueType: 'F32',
  flashAttention: false,
});
const seq = context.getSequence();
const tokens = [
  ...(model.tokens.shouldPrependBosToken && model.tokens.bos != null ? [model.tokens.bos] : []),
  ...model.tokenize(prompt, false),
];
let finite = true;
let nVocab = 0;
const argmax = (out) => {
  let best = -1;
  let bestV = -Infinity;
  for (const [t, v] of out.next.logits) {
    if (!Number.isFinite(v)) finite = false;
    if (v > bestV) {
      bestV = v;
      best = t;
    }
  }
  nVocab = Math.max(nVocab, out.next.logits.size);
  return best;
};
const t0 = performance.now();
const outs = await seq.controlledEvaluate(tokens.map((t) => [t, { generateNext: { logits: true } }]));
const tPrompt = performance.now() - t0;
const top = outs.map(argmax);
let next = top[top.length - 1];
const generated = [];
const t1 = performance.now();
for (let i = 0; i < nDecode; i++) {
  generated.push(next);
  const [o] = await seq.controlledEvaluate([[next, { generateNext: { token: true } }]]);
  next = o.next.token;
}
const tDecode = performance.now() - t1;
const result = {
  model: modelPath,
  n_vocab: nVocab,
  prompt_tokens: tokens.length,
  all_logits_finite: finite,
  argmax_per_position: top,
  greedy: generated,
  prompt_tok_per_s: +(tokens.length / (tPrompt / 1000)).toFixed(1),
  decode_tok_per_s: +(nDecode / (tDecode / 1000)).toFixed(2),
  threads,
};
console.log(args.includes('--json') ? JSON.stringify(result) : result);
await context.dispose();
await model.dispose();
process.exit(finite ? 0 : 1);
